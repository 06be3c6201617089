package main

import (
	"bufio"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// floors are the storeys of the house (docs/design.md section 3): a package may import only
// packages of a lower floor, or of its own room. The plumbing of internal/ is the ground floor;
// the commands, the benchmarks and the test kit drive everything from the top.
var floors = map[string]int{
	"internal":      0, // every internal/ package but the test kit
	"deploy":        0,
	"outbox":        1,
	"webhook":       1,
	"egress":        1,
	"adminclient":   1,
	"eventcatalog":  2,
	"endpoints":     2,
	"partnerkeys":   2,
	"webhook/inbox": 2,
	"console":       2,
	"cdc":           3,
	"fanout":        3,
	"recorder":      3,
	"sender":        3,
	"retrytopics":   3,
	"replay":        3,
	"admin":         4,
	"reseller":      5,
	"cmd":           6,
	"bench":         7,
	"testkit":       6,
}

// components are the rooms that run as components or serve the API: none imports another, but
// admin runs the replay engine in its process.
var components = []string{"cdc", "fanout", "sender", "retrytopics", "recorder", "replay", "admin"}

var allowedCrossings = map[string]bool{"admin→replay": true}

// room names the part of the house a package (relative to the module) belongs to.
func room(pkg string) string {
	switch {
	case strings.HasPrefix(pkg, "internal/testkit"):
		return "testkit"
	case strings.HasPrefix(pkg, "internal/"):
		return "internal"
	case strings.HasPrefix(pkg, "webhook/inbox"):
		return "webhook/inbox"
	}
	return strings.SplitN(pkg, "/", 2)[0]
}

// TestRoomsImportDownward holds the import graph to the floors: no room imports one above it or
// beside it, no component imports another (but admin → replay), and nothing in internal/ outside
// the test kit imports a room.
func TestRoomsImportDownward(t *testing.T) {
	const module = "github.com/hookstream/hookstream"
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "-tags", "cluster", "./...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		from := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		fromRoom := room(from)
		fromFloor, ok := floors[fromRoom]
		if !ok {
			t.Errorf("%s is in no room of the floor plan (layering_test.go): add its room", from)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			toRoom := room(to)
			checked++
			if toRoom == fromRoom {
				continue
			}
			if floors[toRoom] >= fromFloor {
				t.Errorf("%s (%s, floor %d) imports %s (%s, floor %d): a room imports only the floors below it",
					from, fromRoom, fromFloor, to, toRoom, floors[toRoom])
			}
			if slices.Contains(components, fromRoom) && slices.Contains(components, toRoom) && !allowedCrossings[fromRoom+"→"+toRoom] {
				t.Errorf("%s imports %s: a component imports no other component", from, to)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("go list named only %d imports inside the module: the check read nothing", checked)
	}
}
