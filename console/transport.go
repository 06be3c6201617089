package console

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// handlerTransport carries the console's API requests to the admin API's http.Handler in the
// same process: the requests are real HTTP requests of the public API (same routes, same
// authentication and scope), without a network hop or an address to configure.
type handlerTransport struct {
	api http.Handler
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &responseBuffer{header: http.Header{}}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	t.api.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// responseBuffer is the http.ResponseWriter of an in-process API call.
type responseBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *responseBuffer) Header() http.Header { return b.header }

func (b *responseBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *responseBuffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
