package hash

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestVerify(t *testing.T) {
	h1a := NewHash(SchemeH1, [32]byte{1})
	h1b := NewHash(SchemeH1, [32]byte{2})
	zha := NewHash(SchemeZH, [32]byte{1})
	zhb := NewHash(SchemeZH, [32]byte{2})
	other := MustParseHash("h9:whatever")
	tests := map[string]struct {
		got, want, add []Hash
		err            error
	}{
		"nothing recorded":        {got: []Hash{zha, h1a}, want: nil, add: []Hash{h1a, zha}},
		"h1 matches":              {got: []Hash{h1a}, want: []Hash{h1a, zhb}},
		"zh matches, h1 added":    {got: []Hash{h1a, zha}, want: []Hash{zha, zhb}, add: []Hash{h1a}},
		"one of several matches":  {got: []Hash{h1a, zha}, want: []Hash{h1b, zha}, add: []Hash{h1a}},
		"mismatch":                {got: []Hash{h1a, zha}, want: []Hash{h1b, zhb}, err: &MismatchError{}},
		"only unknown schemes":    {got: []Hash{h1a}, want: []Hash{other}, err: ErrNoComputableHash},
		"zh recorded, dir has h1": {got: []Hash{h1a}, want: []Hash{zha}, err: ErrNoComputableHash},
		"unknown scheme ignored":  {got: []Hash{h1a}, want: []Hash{other, h1a}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			add, err := Verify("pkg", tt.got, tt.want)
			switch want := tt.err.(type) {
			case nil:
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if !slices.Equal(add, tt.add) {
					t.Errorf("Verify added %v; want %v", add, tt.add)
				}
			case *MismatchError:
				var me *MismatchError
				if !errors.As(err, &me) {
					t.Fatalf("Verify: %v; want a *MismatchError", err)
				}
				if me.Path != "pkg" || !slices.Equal(me.Got, Preferred(tt.got)) || !slices.Equal(me.Want, Preferred(tt.want)) {
					t.Errorf("MismatchError = %+v", me)
				}
			default:
				if !errors.Is(err, want) {
					t.Errorf("Verify: %v; want %v", err, want)
				}
			}
		})
	}
}

func TestPreferred(t *testing.T) {
	h1 := NewHash(SchemeH1, [32]byte{1})
	zh := NewHash(SchemeZH, [32]byte{1})
	got := Preferred([]Hash{zh, MustParseHash("h9:x"), h1, zh})
	if want := []Hash{h1, zh}; !slices.Equal(got, want) {
		t.Errorf("Preferred = %v; want %v", got, want)
	}
}

func TestSet(t *testing.T) {
	h := NewHash(SchemeZH, [32]byte{1})
	s := NewSet(h)
	s.Add(h, Provenance{SignedBy: []string{"B"}, Platforms: []string{"linux_amd64"}})
	o := make(Set)
	o.Add(h, Provenance{SignedBy: []string{"A", "B"}, VerifiedLocally: true})
	h1 := NewHash(SchemeH1, [32]byte{1})
	o.Add(h1, Provenance{VerifiedLocally: true})
	s.Merge(o)
	if got, want := s.Hashes(), []Hash{h1, h}; !slices.Equal(got, want) {
		t.Errorf("Hashes = %v; want %v", got, want)
	}
	p := s[h]
	if !slices.Equal(p.SignedBy, []string{"A", "B"}) || !p.VerifiedLocally || !slices.Equal(p.Platforms, []string{"linux_amd64"}) {
		t.Errorf("merged provenance = %+v", p)
	}
	if r := s.Records(); len(r) != 2 || r[0].Hash != h1 || !r[0].Provenance.VerifiedLocally {
		t.Errorf("Records = %+v", r)
	}
}

func TestVerifyZipAndDir(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	files := []testFile{{name: "terraform-provider-x", data: pseudoBinary(7, 100<<10)}}
	zipPath := filepath.Join(tmp, "p.zip")
	writeZip(t, zipPath, files, false)
	dir := filepath.Join(tmp, "dir")
	writeTree(t, dir, files)
	sum, err := HashZip(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	other := NewHash(SchemeZH, [32]byte{9})
	otherH1 := NewHash(SchemeH1, [32]byte{9})
	if err := VerifyZip(zipPath, []Hash{other, sum.ZH}); err != nil {
		t.Errorf("VerifyZip by zh: %v", err)
	}
	if err := VerifyZip(zipPath, []Hash{other, sum.H1}); err != nil {
		t.Errorf("VerifyZip by h1: %v", err)
	}
	add, err := Options{}.VerifyZip(ctx, zipPath, []Hash{other, sum.H1})
	if err != nil || !slices.Equal(add, []Hash{sum.ZH}) {
		t.Errorf("VerifyZip added %v, %v; want %v", add, err, sum.ZH)
	}
	var me *MismatchError
	if err := VerifyZip(zipPath, []Hash{other, otherH1}); !errors.As(err, &me) || me.Path != zipPath || !slices.Equal(me.Got, sum.Hashes()) {
		t.Errorf("VerifyZip mismatch: %v", err)
	}
	if err := VerifyDir(dir, []Hash{sum.H1, other}); err != nil {
		t.Errorf("VerifyDir: %v", err)
	}
	if err := VerifyDir(dir, []Hash{otherH1}); !errors.As(err, &me) {
		t.Errorf("VerifyDir mismatch: %v", err)
	}
	if err := VerifyDir(dir, []Hash{sum.ZH}); !errors.Is(err, ErrNoComputableHash) {
		t.Errorf("VerifyDir with only zh: %v", err)
	}
}

func TestInstall(t *testing.T) {
	ctx := context.Background()
	for name, files := range cases() {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			zipPath := filepath.Join(tmp, "p.zip")
			writeZip(t, zipPath, files, true)
			dir := filepath.Join(tmp, "out", "pkg")
			sum, err := Options{}.Install(ctx, zipPath, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := dirhashDir(t, dir); string(sum.H1) != want {
				t.Errorf("Install h1 = %v; dirhash.HashDir of the result = %v", sum.H1, want)
			}
			if zh, _ := ZH(zipPath); sum.ZH != zh {
				t.Errorf("Install zh = %v; want %v", sum.ZH, zh)
			}
			for _, f := range files {
				info, err := os.Stat(filepath.Join(dir, f.name))
				if err != nil || info.Mode().Perm() != 0o755 {
					t.Errorf("%s: %v, mode %v; want 0755 as recorded", f.name, err, info.Mode())
				}
			}
		})
	}
	t.Run("mismatch installs nothing", func(t *testing.T) {
		tmp := t.TempDir()
		zipPath := filepath.Join(tmp, "p.zip")
		writeZip(t, zipPath, []testFile{{name: "f", data: []byte("f")}}, false)
		dir := filepath.Join(tmp, "pkg")
		_, err := Options{}.Install(ctx, zipPath, dir, []Hash{NewHash(SchemeZH, [32]byte{1})})
		var me *MismatchError
		if !errors.As(err, &me) {
			t.Fatalf("Install: %v; want a *MismatchError", err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
			t.Errorf("Install left %v behind", entries)
		}
	})
	t.Run("bad archive installs nothing", func(t *testing.T) {
		tmp := t.TempDir()
		zipPath := filepath.Join(tmp, "p.zip")
		z := zipBytes(t, []testFile{{name: "a", data: []byte("a")}, {name: "b", data: pseudoBinary(1, 256<<10)}}, false)
		z = patchCentral(t, z, "b", 16, 1)
		saved := smallEntry
		smallEntry = 0 // through the streaming path
		defer func() { smallEntry = saved }()
		if err := os.WriteFile(zipPath, z, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Options{}.Install(ctx, zipPath, filepath.Join(tmp, "pkg"), nil)
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("Install: %v; want ErrFormat", err)
		}
		if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
			t.Errorf("Install left %v behind", entries)
		}
	})
	t.Run("accepted by zh", func(t *testing.T) {
		tmp := t.TempDir()
		zipPath := filepath.Join(tmp, "p.zip")
		writeZip(t, zipPath, []testFile{{name: "f", data: []byte("f")}}, false)
		zh, err := ZH(zipPath)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Options{}.Install(ctx, zipPath, filepath.Join(tmp, "pkg"), []Hash{zh})
		if err != nil || sum.ZH != zh {
			t.Fatalf("Install = %v, %v", sum, err)
		}
	})
}
