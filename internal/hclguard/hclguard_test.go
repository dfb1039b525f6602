package hclguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"golang.org/x/tools/txtar"
)

// deep is n copies of open, then mid, then n copies of close.
func deep(open, mid, close string, n int) string {
	return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
}

// TestDeepNesting feeds each checker inputs of ~65,000 nested levels of
// every kind the HCL parsers recurse on (each of which crashes them) and
// checks that the diagnostic names the file and the line.
func TestDeepNesting(t *testing.T) {
	const n = 65000
	head := "# line 1\nok = [1, 2]\n" // the deep value starts on line 3
	native := map[string]string{
		"brackets":     "x = " + deep("[", "1", "]", n),
		"braces":       "x = " + deep("{a = ", "1", "}", n),
		"parens":       "x = " + deep("(", "1", ")", n),
		"calls":        "x = " + deep("f(", "1", ")", n),
		"templates":    "x = " + deep(`"${`, "1", `}"`, n),
		"directives":   `x = "` + deep("%{if true}", "a", "%{endif}", n) + `"`,
		"heredocs":     "x = " + deep("<<EOT\n${", "1", "}\nEOT\n", n),
		"not":          "x = " + strings.Repeat("!", 300000) + "true",
		"minus":        "x = " + strings.Repeat("-", 300000) + "1",
		"plus":         "x = 1" + strings.Repeat(" + 1", 300000),
		"conditionals": "x = " + strings.Repeat("true ? 1 : ", 300000) + "2",
		"indexes":      "x = a" + strings.Repeat("[a]", 300000),
		"blocks":       deep("b {\n", "", "}\n", n),
		"chains":       "x = " + deep("[1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + ", "1", "]", 2000),
		"trailing":     "x = " + deep("[", "1", "] + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1", 900),
	}
	// Where the limit is crossed, for the values spread over lines.
	line := map[string]int{"heredocs": 3 + MaxDepth/2, "blocks": 3 + MaxDepth}
	for name, body := range native {
		t.Run(name, func(t *testing.T) {
			diags := Native([]byte(head+body+"\n"), "deep.tf")
			want := line[name]
			if want == 0 {
				want = 3
			}
			checkDiag(t, diags, "deep.tf", want)
		})
	}
	jsonCases := map[string]string{
		"arrays":    `{"ok": [1], "x": ` + deep("[", "1", "]", n) + "}",
		"objects":   `{"ok": [1], "x": ` + deep(`{"a": `, "1", "}", n) + "}",
		"templates": `{"ok": [1], "x": "` + deep(`${`, "1", `}`, n) + `"}`,
		"quoted":    `{"ok": [1], "x": "` + deep(`${\"${`, "1", `}\"}`, n/2) + `"}`,
		"not":       `{"ok": [1], "x": "${` + strings.Repeat("!", 300000) + `true}"}`,
	}
	for name, body := range jsonCases {
		t.Run("json-"+name, func(t *testing.T) {
			src := strings.Replace(body, `"x"`, "\n\n"+`"x"`, 1) // "x" on line 3
			checkDiag(t, JSON([]byte(src), "deep.tf.json"), "deep.tf.json", 3)
		})
	}
	t.Run("template", func(t *testing.T) {
		diags := Template([]byte("a\nb\n"+deep("${", "1", "}", n)), "repository_template", hcl.Pos{Line: 1, Column: 1})
		checkDiag(t, diags, "repository_template", 3)
	})
}

func checkDiag(t *testing.T, diags hcl.Diagnostics, file string, line int) {
	t.Helper()
	if len(diags) != 1 || diags[0].Severity != hcl.DiagError || diags[0].Summary != Summary {
		t.Fatalf("diagnostics %v, want one %q error", diags, Summary)
	}
	d := diags[0]
	if d.Subject == nil || d.Subject.Filename != file || d.Subject.Start.Line != line {
		t.Fatalf("subject %+v, want %s line %d", d.Subject, file, line)
	}
	if !strings.Contains(diags.Error(), "deep") {
		t.Errorf("message %q does not say what is wrong", diags.Error())
	}
}

// TestLimit checks the limits exactly: MaxDepth levels pass, one more
// does not; and operators count only within one expression.
func TestLimit(t *testing.T) {
	if d := Native([]byte("x = "+deep("(", "1", ")", MaxDepth)+"\n"), "f"); d != nil {
		t.Errorf("%d levels refused: %v", MaxDepth, d)
	}
	if d := Native([]byte("x = "+deep("(", "1", ")", MaxDepth+1)+"\n"), "f"); d == nil {
		t.Errorf("%d levels accepted", MaxDepth+1)
	}
	many := strings.Repeat("x = 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9\n", MaxCost)
	if d := Native([]byte(many), "f"); d != nil {
		t.Errorf("many short expressions refused: %v", d)
	}
	list := "x = [" + strings.Repeat("1 + 2 + 3 + 4,\n", MaxCost) + "]\n"
	if d := Native([]byte(list), "f"); d != nil {
		t.Errorf("a long list of short expressions refused: %v", d)
	}
	if d := Native([]byte("x = 1"+strings.Repeat("+1", MaxCost)+"\n"), "f"); d == nil {
		t.Errorf("an expression of %d operators accepted", MaxCost)
	}
}

// TestNotCountedInLiterals checks that brackets in strings, heredocs and
// comments do not count, and template escapes do not either.
func TestNotCountedInLiterals(t *testing.T) {
	n := MaxDepth * 3
	for name, src := range map[string]string{
		"string":   `x = "` + strings.Repeat("[{(", n) + `"`,
		"escapes":  `x = "` + strings.Repeat("$${%%{", n) + `"`,
		"quote":    `x = "\"` + strings.Repeat("[", n) + `"`,
		"heredoc":  "x = <<EOT\n" + strings.Repeat("[{(\n", n) + "EOT\n",
		"indented": "x = <<-EOT\n" + strings.Repeat("  [{(\n", n) + "  EOT\n",
		"hash":     "# " + strings.Repeat("[", n),
		"slashes":  "// " + strings.Repeat("[", n),
		"block":    "/* " + strings.Repeat("[\n", n) + " */",
	} {
		if d := Native([]byte(src+"\ny = 1\n"), "f"); d != nil {
			t.Errorf("%s: %v", name, d)
		}
	}
	if d := JSON([]byte(`{"x": "`+strings.Repeat(`[{\"`, n)+`"}`), "f.json"); d != nil {
		t.Errorf("json string: %v", d)
	}
}

// TestRealFiles checks every HCL and JSON file of the repository's tests
// and examples (lock files, configurations, CLI configurations, the
// members of txtar archives), and the shared conformance data when it is
// there: none comes near a limit.
func TestRealFiles(t *testing.T) {
	var checked int
	check := func(name string, src []byte) {
		s := newScanner(src, name, hcl.InitialPos)
		switch {
		case strings.HasSuffix(name, ".json"):
			s.json()
		default:
			s.code(false)
		}
		checked++
		if diags := s.result(); diags != nil {
			t.Errorf("%s: %v", name, diags)
		}
		if s.maxCost > 100 {
			t.Errorf("%s: cost %d, not far below the limit", name, s.maxCost)
		}
	}
	roots := []string{filepath.Join("..", "..")}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "conformance")); err == nil {
		roots = append(roots, filepath.Join("..", "..", "..", "shared", "conformance"))
	}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			switch {
			case d.IsDir() && (name == ".git" || name == "fuzz"):
				return filepath.SkipDir
			case d.IsDir():
				return nil
			case strings.HasSuffix(name, ".txtar"):
				ar, err := txtar.ParseFile(p)
				if err != nil {
					return err
				}
				for _, f := range ar.Files {
					check(p+"/"+f.Name, f.Data)
				}
			case strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".tf") ||
				strings.HasSuffix(name, ".hcl") || strings.HasSuffix(name, ".tfrc"):
				src, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				check(p, src)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Errorf("only %d files checked", checked)
	}
	t.Logf("%d files checked", checked)
}

// measureNative returns the cost the scanner measures for src.
func measureNative(src []byte) (int, hcl.Diagnostics) {
	s := newScanner(src, "f", hcl.InitialPos)
	s.code(false)
	return s.maxCost, s.result()
}

// astDepth returns the depth of the deepest expression in the syntax tree.
type depthWalker struct{ depth, max int }

func (w *depthWalker) Enter(n hclsyntax.Node) hcl.Diagnostics {
	if _, ok := n.(hclsyntax.Expression); ok {
		w.depth++
		w.max = max(w.max, w.depth)
	}
	return nil
}

func (w *depthWalker) Exit(n hclsyntax.Node) hcl.Diagnostics {
	if _, ok := n.(hclsyntax.Expression); ok {
		w.depth--
	}
	return nil
}

// FuzzNative checks that the scanner never panics and that its measure
// bounds what the parser builds: the expression tree hclsyntax parses
// from any input is never deeper than three times the measured cost (plus
// a little), so that the limits hold for every input, not only for those
// the tests thought of. It also checks that the JSON and template checkers
// never panic on the same bytes.
func FuzzNative(f *testing.F) {
	for _, s := range []string{
		"x = [1, [2, {a = (3)}]]\n",
		`x = "a${b}c%{if d}e%{else}f%{endif}${"${g}"}"` + "\n",
		"x = <<-EOT\n  ${a}\n  %{for x in y}${x}%{endfor}\n  EOT\ny = !a ? -b : c[d][e] + f(g...)\n",
		"b \"l\" {\n  c = { for k, v in m : k => v if v != null }\n  d = [for x in l : x.y[*].z]\n}\n",
		"x = \"${\n\"a\n}\"\n",
		"x = [ ( ] ) }\n",
		"/* ${ */ x = a // }\n# ]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cost, diags := measureNative(src)
		JSON(src, "f.json")
		Template(src, "t", hcl.InitialPos)
		hcljson.Parse(src, "f.json") // the JSON parser recurses like the guard counts
		if diags != nil || len(src) > 4096 {
			return
		}
		file, _ := hclsyntax.ParseConfig(src, "f", hcl.InitialPos)
		if file == nil {
			return
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			return
		}
		w := &depthWalker{}
		hclsyntax.Walk(body, w)
		if w.max > 3*cost+4 {
			t.Fatalf("the syntax tree is %d expressions deep, the guard measured %d", w.max, cost)
		}
	})
}
