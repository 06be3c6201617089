package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/hookstream/hookstream/internal/clip"
)

// DeadlockDetected is what PostgreSQL's error says when it aborted one of two transactions
// waiting on each other (SQLSTATE 40P01). A process logs it when it tries the work again; the
// writers of the history take their row locks in one order so that it never happens (design.md
// section 4), and the benchmark and the chaos run fail on it.
const DeadlockDetected = "deadlock detected"

// LogMatch is a log file holding lines with a text: how many, and the first of them.
type LogMatch struct {
	Path  string
	Lines int
	First string
}

// String names the file, the count and the first line (clipped).
func (m LogMatch) String() string {
	return fmt.Sprintf("%s: %d lines, the first: %s", m.Path, m.Lines, clip.Marked(m.First, 300))
}

// FindInLogs reads every *.log file directly in dir and returns those holding lines that contain
// text, in the order of their names. A directory that does not exist holds none.
func FindInLogs(dir, text string) ([]LogMatch, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []LogMatch
	for _, p := range paths {
		m, err := findInLog(p, []byte(text))
		if err != nil {
			return out, err
		}
		if m.Lines > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// findInLog counts the lines of the file at path that contain text. Lines of any length are
// read whole.
func findInLog(path string, text []byte) (LogMatch, error) {
	m := LogMatch{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if bytes.Contains(line, text) {
			if m.Lines == 0 {
				m.First = string(bytes.TrimRight(line, "\r\n"))
			}
			m.Lines++
		}
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return m, fmt.Errorf("read %s: %w", path, err)
		}
	}
}
