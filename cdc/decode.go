package cdc

import (
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgtype"
)

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
