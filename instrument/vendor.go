package instrument

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A module with a vendor directory builds from it (-mod=vendor, the
// default from go 1.14 on), and the go command then wants every module of
// the build, the runtime copy too, listed in vendor/modules.txt, which it
// reads past the overlay. So racekit builds such a module with -mod=mod
// instead, each vendored module replaced (in the alternate go.mod) by a
// directory made from its vendored packages: the build uses the vendored
// code and needs neither the network nor the module cache.

// vendoredModule is one module of vendor/modules.txt.
type vendoredModule struct {
	path, version, goVersion string
	pkgs                     []string
}

// vendorMode reports whether the go command builds the module whose go.mod
// is gomod (go line modGo) from its vendor directory by default.
func vendorMode(gomod, modGo string) bool {
	if !fileExists(filepath.Join(filepath.Dir(gomod), "vendor", "modules.txt")) {
		return false
	}
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if strings.HasPrefix(f, "-mod=") || strings.HasPrefix(f, "--mod=") {
			return strings.HasSuffix(f, "=vendor")
		}
	}
	return !langBefore(modGo, "1.14")
}

// readModulesTxt returns the modules of a vendor/modules.txt that have
// vendored packages and are not replaced by a directory (which the build
// reads where it is). A module replaced by another module version is left
// out too: not supported.
func readModulesTxt(data []byte) []*vendoredModule {
	var out []*vendoredModule
	var cur *vendoredModule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if cur == nil {
				continue
			}
			for _, part := range strings.Split(line[3:], ";") {
				if f := strings.Fields(part); len(f) == 2 && f[0] == "go" {
					cur.goVersion = f[1]
				}
			}
		case strings.HasPrefix(line, "# "):
			cur = nil
			f := strings.Fields(line[2:])
			if len(f) == 2 {
				cur = &vendoredModule{path: f[0], version: f[1]}
				out = append(out, cur)
			}
		case line != "" && !strings.HasPrefix(line, "#") && cur != nil:
			cur.pkgs = append(cur.pkgs, line)
		}
	}
	kept := out[:0]
	for _, m := range out {
		if len(m.pkgs) > 0 {
			kept = append(kept, m)
		}
	}
	return kept
}

// vendorDirectives writes, under cache/vendor/<hash>, a module directory
// for each vendored module (its go.mod, and the files of its vendored
// packages) and returns the alternate go.mod's lines that require and
// replace each by it.
func vendorDirectives(gomod, cache string) (string, error) {
	vendor := filepath.Join(filepath.Dir(gomod), "vendor")
	txt, err := os.ReadFile(filepath.Join(vendor, "modules.txt"))
	if err != nil {
		return "", err
	}
	mods := readModulesTxt(txt)
	// The copy is named by modules.txt and the name, size and time of
	// each vendored file.
	h := sha256.New()
	h.Write(txt)
	type file struct{ src, dst string }
	var files []file
	for _, m := range mods {
		for _, p := range m.pkgs {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, m.path), "/")
			ents, err := os.ReadDir(filepath.Join(vendor, filepath.FromSlash(p)))
			if err != nil {
				return "", fmt.Errorf("vendored package %s: %v", p, err)
			}
			for _, e := range ents {
				info, err := e.Info()
				if err != nil || !info.Mode().IsRegular() {
					continue
				}
				src := filepath.Join(vendor, filepath.FromSlash(p), e.Name())
				files = append(files, file{src, filepath.Join(modDirName(m.path), filepath.FromSlash(rel), e.Name())})
				fmt.Fprintf(h, "%s\x00%d\x00%d\x00", src, info.Size(), info.ModTime().UnixNano())
			}
		}
	}
	dir := filepath.Join(cache, "vendor", hex.EncodeToString(h.Sum(nil)[:12]))
	var b strings.Builder
	b.WriteString("\n// The vendored modules, added by racekit.\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "require %s %s\nreplace %s %s => %s\n", m.path, m.version, m.path, m.version, filepath.Join(dir, modDirName(m.path)))
	}
	if fileExists(dir) {
		return b.String(), nil
	}
	if err := os.MkdirAll(filepath.Join(cache, "vendor"), 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache, "vendor"), ".tmp-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, m := range mods {
		mod := "module " + m.path + "\n"
		if m.goVersion != "" {
			mod += "\ngo " + m.goVersion + "\n"
		}
		p := filepath.Join(tmp, modDirName(m.path), "go.mod")
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(mod), 0o666); err != nil {
			return "", err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].dst < files[j].dst })
	for _, f := range files {
		data, err := os.ReadFile(f.src)
		if err != nil {
			return "", err
		}
		p := filepath.Join(tmp, f.dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, data, 0o666); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !fileExists(dir) {
		return "", err
	}
	return b.String(), nil
}

// modDirName names a module's directory in the vendored copy: one level,
// so that no module's directory is inside another's.
func modDirName(path string) string {
	h := sha256.Sum256([]byte(path))
	return hex.EncodeToString(h[:6])
}
