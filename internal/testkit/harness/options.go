package harness

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// ParseOptions parses a program's arguments with parse, or ends the program with status 2: after
// -h, as parse printed the usage, or saying what is wrong, after the program's name.
func ParseOptions[T any](name string, args []string, parse func([]string) (T, error)) T {
	o, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(2)
	}
	return o
}
