// Package provlayout reads the layout OpenTofu gives a directory of
// provider packages, shared by the filesystem mirror (source/mirror) and
// the installed provider directories (source/providercache), so that
// reading installed providers links no network code:
//
//   - unpacked: HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/ holding the package's
//     files;
//   - packed: HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip.
//
// Host directory names are compared in their normalized form, namespace
// and type case-insensitively; entries whose names do not parse are
// ignored.
package provlayout

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"

	"github.com/tflock/tflock/internal/provaddr"
	"github.com/tflock/tflock/resolve/versions"
	"github.com/tflock/tflock/source"
)

// Entry is one provider package found in a provider directory.
type Entry struct {
	Package source.ProviderPackage
	// Path is the package directory (unpacked) or the zip file (packed).
	Path string
	// Packed is true for a zip archive.
	Packed bool
}

// Scan reads the provider directory rooted at dir, restricted to one
// provider when only is non-nil. A missing dir holds nothing. The entries
// are sorted by provider address, version, platform, with unpacked
// entries before packed ones.
func Scan(ctx context.Context, dir string, only *tfaddr.Provider) ([]Entry, error) {
	var out []Entry
	hosts, err := readDirs(dir)
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		host, err := svchost.ForComparison(h)
		if err != nil || (only != nil && host != only.Hostname) {
			continue
		}
		hostDir := filepath.Join(dir, h)
		namespaces, err := readDirs(hostDir)
		if err != nil {
			return nil, err
		}
		for _, n := range namespaces {
			ns := n
			if ns != tfaddr.LegacyProviderNamespace {
				if ns, err = provaddr.ParsePart(n); err != nil {
					continue
				}
			}
			if only != nil && ns != only.Namespace {
				continue
			}
			types, err := readDirs(filepath.Join(hostDir, n))
			if err != nil {
				return nil, err
			}
			for _, t := range types {
				typ, err := provaddr.ParsePart(t)
				if err != nil || (only != nil && typ != only.Type) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				addr := tfaddr.Provider{Hostname: host, Namespace: ns, Type: typ}
				found, err := scanType(filepath.Join(hostDir, n, t), addr)
				if err != nil {
					return nil, err
				}
				out = append(out, found...)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Package, out[j].Package
		if a.Addr != b.Addr {
			return a.Addr.String() < b.Addr.String()
		}
		if a.Version != b.Version {
			return a.Version.LessThan(b.Version)
		}
		if a.Platform != b.Platform {
			return a.Platform.LessThan(b.Platform)
		}
		return !out[i].Packed && out[j].Packed
	})
	return out, nil
}

// readDirs lists the names of the directories (or links to directories)
// in dir, sorted. A missing dir has none.
func readDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if isDir(filepath.Join(dir, e.Name()), e) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func isDir(path string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink != 0 {
		info, err := os.Stat(path)
		return err == nil && info.IsDir()
	}
	return false
}

func scanType(dir string, addr tfaddr.Provider) ([]Entry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if isDir(p, e) {
			v, err := versions.Parse(e.Name())
			if err != nil {
				continue
			}
			plats, err := readDirs(p)
			if err != nil {
				return nil, err
			}
			for _, pl := range plats {
				plat, err := source.ParsePlatform(pl)
				if err != nil {
					continue
				}
				out = append(out, Entry{
					Package: source.ProviderPackage{Addr: addr, Version: v, Platform: plat},
					Path:    filepath.Join(p, pl),
				})
			}
			continue
		}
		if pkg, ok := parsePackedName(e.Name(), addr); ok {
			out = append(out, Entry{Package: pkg, Path: p, Packed: true})
		}
	}
	return out, nil
}

// parsePackedName parses "terraform-provider-TYPE_VERSION_OS_ARCH.zip".
func parsePackedName(name string, addr tfaddr.Provider) (source.ProviderPackage, bool) {
	rest, ok := strings.CutPrefix(name, "terraform-provider-")
	if !ok {
		return source.ProviderPackage{}, false
	}
	rest, ok = strings.CutSuffix(rest, ".zip")
	if !ok {
		return source.ProviderPackage{}, false
	}
	parts := strings.Split(rest, "_")
	if len(parts) != 4 {
		return source.ProviderPackage{}, false
	}
	if typ, err := provaddr.ParsePart(parts[0]); err != nil || typ != addr.Type {
		return source.ProviderPackage{}, false
	}
	v, err := versions.Parse(parts[1])
	if err != nil {
		return source.ProviderPackage{}, false
	}
	plat, err := source.ParsePlatform(parts[2] + "_" + parts[3])
	if err != nil {
		return source.ProviderPackage{}, false
	}
	return source.ProviderPackage{Addr: addr, Version: v, Platform: plat}, true
}
