// Command gen rewrites the webhooks section of the OpenAPI document named by its argument from
// the event catalog (package webhookdoc); go generate ./admin runs it.
package main

import (
	"fmt"
	"os"

	"github.com/hookstream/hookstream/admin/internal/webhookdoc"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen openapi.json")
		os.Exit(2)
	}
	doc, err := os.ReadFile(os.Args[1])
	if err == nil {
		doc, err = webhookdoc.Rewrite(doc)
	}
	if err == nil {
		err = os.WriteFile(os.Args[1], doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
