package adminclient

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestStreamReader(t *testing.T) {
	body := ": connected\n\nid: c1\n\n" +
		"id: c2\nevent: customer.created\ndata: {\"a\":\ndata: 1}\n\n" +
		": heartbeat\n\n" +
		"retry: 2000\r\nid: c3\r\nevent: error\r\ndata:{}\r\n\r\n" +
		"id: c4\ndata: cut"
	r := NewStreamReader(strings.NewReader(body))
	want := []StreamMessage{
		{ID: "c1"},
		{ID: "c2", Event: "customer.created", Data: []byte("{\"a\":\n1}")},
		{ID: "c3", Event: "error", Data: []byte("{}")},
	}
	for i, w := range want {
		m, err := r.Next()
		if err != nil || !reflect.DeepEqual(m, w) {
			t.Fatalf("message %d = %+v, %v; want %+v", i, m, err, w)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a stream cut inside a message: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := NewStreamReader(strings.NewReader("id: c1\n\n: x\n\n")).Next(); err != nil {
		t.Fatal(err)
	}
	r = NewStreamReader(strings.NewReader("id: c1\n\n: x\n\n"))
	_, _ = r.Next()
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("a stream ended between messages: %v, want io.EOF", err)
	}
}
