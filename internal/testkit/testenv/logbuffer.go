package testenv

import (
	"bytes"
	"io"
	"os"
	"sync"
	"testing"
)

// Buffer collects what several goroutines write (a component's log, a child process's output)
// while the test reads it. The zero value is empty and ready.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) { return b.write(p, nil) }

// write appends p, and writes it to echo as well unless echo is nil.
func (b *Buffer) write(p []byte, echo io.Writer) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if echo != nil {
		echo.Write(p)
	}
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// LogBuffer is a Buffer for a component's log that shows it on stderr as well with -v.
type LogBuffer struct{ Buffer }

func (b *LogBuffer) Write(p []byte) (int, error) {
	var echo io.Writer
	if testing.Verbose() {
		echo = os.Stderr
	}
	return b.write(p, echo)
}
