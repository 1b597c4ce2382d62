package report

import (
	"embed"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// SchemaID names the JSON Schema of the report contract.
const SchemaID = "https://github.com/jsforensics/jsforensics/report/" + "v1.schema.json"

// sources are this package's Go files: the schema's descriptions are the
// doc comments of the report types, read from them, so the schema and the
// code cannot tell different stories.
//
//go:embed *.go
var sources embed.FS

// JSONSchema returns the JSON Schema (draft 2020-12) of the report that
// WriteJSON prints, generated from the Go types: a field without omitempty
// is required, unknown properties are refused, descriptions are the
// types' doc comments.
func JSONSchema() ([]byte, error) {
	return schemaOf(&Report{}, SchemaID, "jsforensics report ("+Schema+")")
}

// RehearsalSchemaID names the JSON Schema of `jsforensics rehearse --format json`.
const RehearsalSchemaID = "https://github.com/jsforensics/jsforensics/report/" + "rehearsal-v1.schema.json"

// RehearsalJSONSchema returns the JSON Schema of a rehearsal (Rehearsal),
// made as JSONSchema makes the report's.
func RehearsalJSONSchema() ([]byte, error) {
	return schemaOf(&Rehearsal{}, RehearsalSchemaID, "jsforensics rehearsal ("+RehearsalSchema+")")
}

func schemaOf(v any, id, title string) ([]byte, error) {
	comments, err := typeComments()
	if err != nil {
		return nil, err
	}
	r := &jsonschema.Reflector{
		// Sequences, sizes, counts and terms are unsigned: say so.
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t.Kind() {
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				return &jsonschema.Schema{Type: "integer", Minimum: "0"}
			}
			return nil
		},
		LookupComment: func(t reflect.Type, field string) string {
			if t.PkgPath() != reflect.TypeFor[Report]().PkgPath() {
				return ""
			}
			key := t.Name()
			if field != "" {
				key += "." + field
			}
			return comments[key]
		},
	}
	s := r.Reflect(v)
	s.ID = jsonschema.ID(id)
	s.Title = title
	return json.MarshalIndent(s, "", "  ")
}

// JSONSchema makes a severity one of its three values in the schema.
func (Severity) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{string(Critical), string(Warning), string(Info)}}
}

// typeComments maps "Type" and "Type.Field" of this package to their doc
// (or line) comments, one paragraph.
func typeComments() (map[string]string, error) {
	out := map[string]string{}
	fset := token.NewFileSet()
	err := fs.WalkDir(sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := sources.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				out[ts.Name.Name] = commentText(doc, nil)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						out[ts.Name.Name+"."+n.Name] = commentText(fld.Doc, fld.Comment)
					}
				}
			}
		}
		return nil
	})
	return out, err
}

func commentText(doc, line *ast.CommentGroup) string {
	var parts []string
	for _, g := range []*ast.CommentGroup{doc, line} {
		if t := strings.TrimSpace(g.Text()); t != "" {
			parts = append(parts, strings.Join(strings.Fields(t), " "))
		}
	}
	return strings.Join(parts, " ")
}
