package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepNesting runs the program on a configuration, then a lock file,
// nested 65,000 levels deep (issue 11 item 8: a fatal stack overflow in
// the HCL parser): each run fails with an error naming the file, the line
// and the fault, and leaves the lock file as it was.
func TestDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 65000) + strings.Repeat("]", 65000)
	for _, c := range []struct{ file, mainTF, lock string }{
		{"main.tf", "terraform {}\n\nlocals { x = " + deep + " }\n", ""},
		{".terraform.lock.hcl", "terraform {}\n", "# lock\n\nx = " + deep + "\n"},
	} {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(c.mainTF), 0o644); err != nil {
				t.Fatal(err)
			}
			lockPath := filepath.Join(dir, ".terraform.lock.hcl")
			if c.lock != "" {
				if err := os.WriteFile(lockPath, []byte(c.lock), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, code := runLock(t, "-cache-dir", filepath.Join(t.TempDir(), "cache"), dir)
			if code == 0 || !strings.Contains(out, c.file+":3") || !strings.Contains(out, "Nesting too deep") {
				t.Fatalf("exit %d, output:\n%.2000s", code, out)
			}
			got, _ := os.ReadFile(lockPath)
			if string(got) != c.lock {
				t.Errorf("the lock file changed:\n%.300s", got)
			}
		})
	}
}
