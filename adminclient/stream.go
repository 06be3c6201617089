package adminclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// StreamMessage is one server-sent event of StreamEvents (GET …/events/stream): ID is the feed
// cursor after it, Event the event type and Data the envelope. A message with an ID and no Data
// only moves the cursor (past records of other partners); an Event "error" carries the API's
// error body and is the last message of the stream.
type StreamMessage struct {
	ID, Event string
	Data      []byte
}

// StreamReader reads the messages of a text/event-stream body, skipping comments (the
// heartbeats) and the fields it does not know (retry).
type StreamReader struct {
	r *bufio.Reader
}

// MaxStreamLine bounds one line of a stream: an envelope larger than this is refused rather than
// buffered without end.
const MaxStreamLine = 16 << 20

// ErrStreamLine is returned for a line longer than MaxStreamLine.
var ErrStreamLine = errors.New("adminclient: event stream line too long")

// NewStreamReader reads messages from body.
func NewStreamReader(body io.Reader) *StreamReader {
	return &StreamReader{r: bufio.NewReaderSize(body, 64<<10)}
}

// Next returns the next message; io.EOF when the stream ended between messages, and
// io.ErrUnexpectedEOF when it ended inside one (which is then lost: resume from the last ID).
func (s *StreamReader) Next() (StreamMessage, error) {
	var m StreamMessage
	var data [][]byte
	started := false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && started {
				return StreamMessage{}, io.ErrUnexpectedEOF
			}
			return StreamMessage{}, err
		}
		if len(line) == 0 {
			if m.ID == "" && data == nil {
				started = false
				continue // a blank line after comments only
			}
			if data != nil {
				m.Data = bytes.Join(data, []byte("\n"))
			}
			return m, nil
		}
		started = true
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			m.ID = value
		case "event":
			m.Event = value
		case "data":
			data = append(data, []byte(value))
		}
	}
}

// line reads one line without its end (LF, CRLF or CR alone ends a line in SSE; the server
// writes LF).
func (s *StreamReader) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > MaxStreamLine {
			return nil, ErrStreamLine
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		out = bytes.TrimSuffix(out[:len(out)-1], []byte("\r"))
		return out, nil
	}
}
