package endpoints

import "fmt"

// A conversion rewrites an envelope of one schema version into another (R14, R31). Version 1 is
// the only version today; a new version adds its conversions here, and endpoints pinned to an
// older version keep receiving that version.
type conversion func(body []byte) ([]byte, error)

var conversions = map[[2]int]conversion{}

// ConvertEnvelope returns the envelope body in the endpoint's pinned schema version. The same
// version returns body itself, byte for byte: what cdc serialised is what is signed and sent.
func ConvertEnvelope(body []byte, from, to int) ([]byte, error) {
	if from == to {
		return body, nil
	}
	conv, ok := conversions[[2]int{from, to}]
	if !ok {
		return nil, fmt.Errorf("no conversion of the event from schema version %d to %d", from, to)
	}
	return conv(body)
}
