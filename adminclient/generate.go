package adminclient

// openapi.gen.go is generated from the admin API's document by oapi-codegen, a tool dependency
// of the module (go.mod), so this needs no install: go generate ./adminclient, or make generate.
// Its name sorts after doc.go, so go doc opens with this package's comment, not the generator's.
// TestGeneratedClientIsCurrent fails when the committed file is not what this produces.
//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o openapi.gen.go ../admin/openapi.json
