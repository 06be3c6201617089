package cdc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgtype"
)

// parseMessage decodes one pgoutput message with pglogrepl.Parse. pglogrepl reads a message's
// fields without checking they are there, so a truncated or corrupt message would panic inside
// it; here it is an error, and the session ends and restarts from the slot as for any other
// decoding error.
func parseMessage(wal []byte) (msg pglogrepl.Message, err error) {
	if len(wal) == 0 {
		return nil, errors.New("empty message")
	}
	if err := checkLengths(wal); err != nil {
		return nil, fmt.Errorf("message of type %q, %d bytes: %w", wal[0], len(wal), err)
	}
	defer func() {
		if p := recover(); p != nil {
			msg, err = nil, fmt.Errorf("malformed message of type %q, %d bytes: %v", wal[0], len(wal), p)
		}
	}()
	msg, err = pglogrepl.Parse(wal)
	if err != nil {
		return nil, fmt.Errorf("message of type %q, %d bytes: %w", wal[0], len(wal), err)
	}
	return msg, nil
}

// checkLengths makes sure the counts and lengths that pglogrepl allocates by stay within the
// message: it makes a column's bytes, or a truncation's list of relations, as large as the
// message says before it reads them, so one corrupt length would allocate up to 16 GiB.
func checkLengths(wal []byte) error {
	body := wal[1:]
	switch wal[0] {
	case 'T': // Int32 number of relations, Int8 options, Int32 per relation
		if len(body) >= 5 {
			if n := binary.BigEndian.Uint32(body); uint64(n)*4 > uint64(len(body)-5) {
				return fmt.Errorf("truncation of %d relations in a message of %d bytes", n, len(wal))
			}
		}
	case 'I', 'U', 'D':
		// Int32 relation id, a byte ('N' new, 'K' key, 'O' old) and its tuple; an update with
		// 'K' or 'O' has a byte and the new tuple after that.
		if len(body) < 5 {
			return nil // pglogrepl refuses it without allocating
		}
		end, err := checkTuple(body, 5)
		if err != nil {
			return err
		}
		if wal[0] == 'U' && (body[4] == 'K' || body[4] == 'O') {
			if _, err := checkTuple(body, end+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTuple checks the TupleData at p of body (Int16 columns, each a kind byte and, for text
// and binary values, an Int32 length and that many bytes) and returns where it ends.
func checkTuple(body []byte, p int) (int, error) {
	if len(body)-p < 2 {
		return 0, errors.New("tuple data cut short")
	}
	n := int(binary.BigEndian.Uint16(body[p:]))
	p += 2
	for i := range n {
		if p >= len(body) {
			return 0, fmt.Errorf("tuple data cut short at column %d of %d", i, n)
		}
		kind := body[p]
		p++
		if kind != pglogrepl.TupleDataTypeText && kind != pglogrepl.TupleDataTypeBinary {
			continue
		}
		if len(body)-p < 4 {
			return 0, fmt.Errorf("tuple data cut short at column %d of %d", i, n)
		}
		size := binary.BigEndian.Uint32(body[p:])
		p += 4
		if uint64(size) > uint64(len(body)-p) {
			return 0, fmt.Errorf("column %d of %d claims %d bytes, %d are left", i, n, size, len(body)-p)
		}
		p += int(size)
	}
	return p, nil
}

// relations caches the Relation messages of the stream: pgoutput sends a table's columns once
// per session (and again after a schema change), and later tuples refer to it by id.
type relations struct {
	byID  map[uint32]*pglogrepl.RelationMessage
	types *pgtype.Map
}

func newRelations() *relations {
	return &relations{byID: map[uint32]*pglogrepl.RelationMessage{}, types: pgtype.NewMap()}
}

func (r *relations) add(m *pglogrepl.RelationMessage) { r.byID[m.RelationID] = m }

func (r *relations) get(id uint32) (*pglogrepl.RelationMessage, error) {
	rel, ok := r.byID[id]
	if !ok {
		return nil, fmt.Errorf("cdc: tuple for unknown relation %d", id)
	}
	return rel, nil
}

// column is one value of a decoded tuple. pgoutput sends text format; unchanged TOAST values
// (only possible in updates) arrive without data.
type column struct {
	oid       uint32
	text      []byte
	null      bool
	unchanged bool
}

// row is a decoded tuple by column name.
type row map[string]column

func (r *relations) decode(relID uint32, tuple *pglogrepl.TupleData) (*pglogrepl.RelationMessage, row, error) {
	rel, err := r.get(relID)
	if err != nil {
		return nil, nil, err
	}
	if tuple == nil {
		return rel, row{}, nil
	}
	if len(tuple.Columns) != len(rel.Columns) {
		return nil, nil, fmt.Errorf("cdc: %s.%s: tuple has %d columns, relation %d", rel.Namespace, rel.RelationName, len(tuple.Columns), len(rel.Columns))
	}
	out := make(row, len(rel.Columns))
	for i, c := range tuple.Columns {
		col := column{oid: rel.Columns[i].DataType}
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			col.null = true
		case pglogrepl.TupleDataTypeToast:
			col.unchanged = true
		case pglogrepl.TupleDataTypeText:
			col.text = c.Data
		default:
			return nil, nil, fmt.Errorf("cdc: %s.%s: column %s in unexpected format %q", rel.Namespace, rel.RelationName, rel.Columns[i].Name, c.DataType)
		}
		out[rel.Columns[i].Name] = col
	}
	return rel, out, nil
}

// scan decodes column name of r into dst (a pointer to a Go value pgx can scan into). A NULL
// leaves dst untouched and reports false.
func (r *relations) scan(rw row, name string, dst any) (bool, error) {
	c, ok := rw[name]
	if !ok {
		return false, fmt.Errorf("cdc: column %s missing", name)
	}
	if c.null || c.unchanged {
		return false, nil
	}
	if err := r.types.Scan(c.oid, pgtype.TextFormatCode, c.text, dst); err != nil {
		return false, fmt.Errorf("cdc: column %s: %w", name, err)
	}
	return true, nil
}
