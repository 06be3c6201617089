package sender

import (
	"encoding/json"
	"testing"
)

// headCases are envelope bodies for readHead, each read by both paths; fast says whether the
// fast path must accept it (a fast path that always declined would still be exact, but slow).
var headCases = []struct {
	body string
	fast bool
}{
	{`{"event_id":"evt_1","type":"customer.created","partner_id":"p_a"}`, true},
	{` { "event_id" : "evt_1" , "type":"t", "partner_id":"p", "data":{"a":[1,2,{"b":"}"}],"c":"\"{"},"n":-1.5e3,"ok":true,"nil":null} `, true},
	{`{"data":{"type":"nested, not the head"},"type":"outer","event_id":"e","partner_id":"p"}`, true},
	{`{"event_id":"a","event_id":"b","type":"t","partner_id":"p"}`, true}, // the last one wins
	{`{"subject":["x",{"y":"]"}],"type":"t"}`, true},
	{`{}`, true},
	{`{"Type":"case-insensitive match"}`, false},
	{`{"PARTNER_ID":"p","partner_id":"q"}`, false},
	{`{"type":"caf\u00e9"}`, false},
	{`{"type":"café"}`, false},
	{`{"t\u0079pe":"escaped key"}`, false},
	{`{"type":5}`, false},
	{`{"type":null}`, false},
	{`{"type":["a"]}`, false},
	{`[{"type":"t"}]`, false},
	{`"type"`, false},
	{`{"type":"t"`, false},
	{`{"type":"t"} x`, false},
	{`{"type":"t",}`, false},
	{``, false},
	{`{"a":1e}`, false},
}

func TestReadHeadMatchesEncodingJSON(t *testing.T) {
	for _, c := range headCases {
		_, fast := readHeadFast([]byte(c.body))
		if fast != c.fast {
			t.Errorf("%s: fast path accepted %v, want %v", c.body, fast, c.fast)
		}
		checkHead(t, []byte(c.body))
	}
}

func FuzzReadHead(f *testing.F) {
	for _, c := range headCases {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkHead(t, body) })
}

// checkHead requires readHead to give encoding/json's value and error for body.
func checkHead(t *testing.T, body []byte) {
	t.Helper()
	var want envelopeHead
	wantErr := json.Unmarshal(body, &want)
	got, err := readHead(body)
	if got != want || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: readHead = %+v, %v; encoding/json = %+v, %v", body, got, err, want, wantErr)
	}
}
