package secure_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hookstream/hookstream/internal/testkit/secure"
)

// The ACL table of docs/operations.md states the grants of secure.ACLs, which make test-secure
// runs the components with: each principal's row names every resource it is granted (under the
// prefix P, marked "prefixed" when the grant is) and every operation, and no principal has a row
// without grants.
func TestDocsACLTable(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(hookstream-[a-z]+)` \\|(.*)\\|$").FindAllStringSubmatch(string(raw), -1) {
		rows[m[1]] = m[2]
	}
	users := map[string]bool{}
	for _, g := range secure.ACLs("P") {
		users[g.User] = true
		row, ok := rows[g.User]
		if !ok {
			t.Errorf("docs/operations.md's ACL table has no row of %s", g.User)
			continue
		}
		name := "`" + g.Name + "`"
		if g.Kind == "cluster" {
			name = "`ClusterAction`"
		}
		if g.Prefixed {
			name = "prefixed " + name
		}
		if !strings.Contains(row, name) {
			t.Errorf("%s's row does not name %s (%s)", g.User, name, g)
		}
		for _, op := range g.Ops {
			word := map[string]string{"READ": "Read", "WRITE": "Write", "DESCRIBE": "Describe", "CREATE": "Create",
				"DESCRIBE_CONFIGS": "DescribeConfigs", "CLUSTER_ACTION": "ClusterAction"}[op.String()]
			if word == "" || !strings.Contains(row, word) {
				t.Errorf("%s's row does not say %s (%s)", g.User, op, g)
			}
		}
	}
	for user := range rows {
		if !users[user] {
			t.Errorf("docs/operations.md's ACL table has a row of %s, which secure.ACLs grants nothing", user)
		}
	}
}
