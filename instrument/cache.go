package instrument

// The cache: instrumented files named by their content, the runtime's
// copy as module racekit.dev/rt, dependency copies, the overlay and the
// alternate go.mod and go.work.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// writeCached stores data under dir/kind/<hash><ext> (once: the name is
// the content's hash) and returns the path.
func writeCached(cache, kind, ext string, data []byte) (string, error) {
	h := sha256.Sum256(data)
	dir := filepath.Join(cache, kind)
	p := filepath.Join(dir, hex.EncodeToString(h[:16])+ext)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	return p, writeAtomic(p, data)
}

func writeAtomic(p string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}

func writeOverlay(cache string, m map[string]string) (string, error) {
	data, err := json.MarshalIndent(struct{ Replace map[string]string }{m}, "", "\t")
	if err != nil {
		return "", err
	}
	return writeCached(cache, "overlay", ".json", data)
}

// runtimeDirs are the packages of racekit's runtime (relative to the source
// root): rt, rt/rttest and the std-only packages they import (the trace
// codec, the scheduler's strategies, the filters rt applies while
// recording, the shadow memory TREE keeps its addresses in, and the
// GORACE reader). A directory a source tree lacks is left out.
var runtimeDirs = []string{"rt", "rt/rttest", "trace", "trace/rkt", "sched", "filter", "filter/sample", "filter/tree", "detect/shadow", "gorace"}

// runtimeFiles lists the files of racekit's runtime, relative to the
// source root.
func runtimeFiles(root string) ([]string, error) {
	var files []string
	for _, dir := range runtimeDirs {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if errors.Is(err, fs.ErrNotExist) && dir != "rt" {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, "_test.go") || n == "mkatomic.go" {
				continue
			}
			if strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".s") {
				files = append(files, path.Join(dir, n))
			}
		}
	}
	return files, nil
}

// copyRuntime writes the runtime under cache/rt/<hash> as module RTModule
// (imports of racekit's packages renamed), so that a user's build needs no
// requirement beyond it, and returns its directory. Its go.mod has the
// main module's go line, goVersion ("" for none): a dependency may not ask
// for a newer Go than the main module. When that is older than
// minRuntimeGo, each Go file gets a go1.N constraint, which raises its
// language version alone (goversion.go).
func copyRuntime(root, cache, goVersion string) (string, error) {
	files, err := runtimeFiles(root)
	if err != nil {
		return "", fmt.Errorf("copying racekit's runtime: %v", err)
	}
	mod := "module " + RTModule + "\n"
	if goVersion != "" {
		mod += "\ngo " + goVersion + "\n"
	}
	raise := langBefore(goVersion, minRuntimeGo)
	contents := map[string][]byte{"go.mod": []byte(mod)}
	h := sha256.New()
	h.Write(contents["go.mod"])
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		data = bytes.ReplaceAll(data, []byte(`"github.com/racekit/racekit/`), []byte(`"`+RTModule+`/`))
		if raise && strings.HasSuffix(f, ".go") {
			if data, err = requireGo(data, minRuntimeGo); err != nil {
				return "", fmt.Errorf("copying racekit's runtime: %s: %v", f, err)
			}
		}
		contents[f] = data
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	dir := filepath.Join(cache, "rt", hex.EncodeToString(h.Sum(nil)[:12]))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache), ".rt-*")
	if err != nil {
		if err := os.MkdirAll(cache, 0o777); err != nil {
			return "", err
		}
		if tmp, err = os.MkdirTemp(cache, ".rt-*"); err != nil {
			return "", err
		}
	}
	for f, data := range contents {
		p := filepath.Join(tmp, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, data, 0o666); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr != nil {
			return "", err
		}
	}
	return dir, nil
}

// depModule is a dependency module with instrumented files.
type depModule struct {
	path, dir string
	files     map[string][]byte // path relative to dir → instrumented source
}

// copyDeps copies each dependency module with instrumented files under
// cache/deps/<hash>, the instrumented files in place of the originals, and
// returns the replace directives (module path → copy) for the alternate
// go.mod.
func copyDeps(cache string, deps map[string]*depModule) (map[string]string, error) {
	out := map[string]string{}
	for _, d := range deps {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00", d.path, d.dir)
		var names []string
		for n := range d.files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s\x00%d\x00", n, len(d.files[n]))
			h.Write(d.files[n])
		}
		dst := filepath.Join(cache, "deps", hex.EncodeToString(h.Sum(nil)[:12]))
		out[d.path] = dst
		if _, err := os.Stat(filepath.Join(dst, "go.mod")); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Join(cache, "deps"), 0o777); err != nil {
			return nil, err
		}
		tmp, err := os.MkdirTemp(filepath.Join(cache, "deps"), ".tmp-*")
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(d.dir, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(d.dir, p)
			target := filepath.Join(tmp, rel)
			if e.IsDir() {
				return os.MkdirAll(target, 0o777)
			}
			if !e.Type().IsRegular() {
				return nil
			}
			data, ok := d.files[filepath.ToSlash(rel)]
			if !ok {
				if data, err = os.ReadFile(p); err != nil {
					return err
				}
			}
			return os.WriteFile(target, data, 0o666)
		})
		if err == nil && !fileExists(filepath.Join(tmp, "go.mod")) {
			// A module without a go.mod file: give the copy one.
			err = os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+d.path+"\n"), 0o666)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("copying %s: %v", d.path, err)
		}
		if err := os.Rename(tmp, dst); err != nil {
			os.RemoveAll(tmp)
			if !fileExists(filepath.Join(dst, "go.mod")) {
				return nil, err
			}
		}
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeModFile writes the alternate go.mod: the user's, plus the runtime
// required and replaced by its copy, and the replacements of dependency
// modules by their instrumented copies, with a copy of the user's go.sum
// beside it (the go command reads alt.sum for alt.mod).
func writeModFile(gomod, rtDir, cache string, replaces map[string]string, extra string) (string, error) {
	mod, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(filepath.Dir(gomod), "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	var b bytes.Buffer
	b.Write(mod)
	if len(mod) > 0 && mod[len(mod)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n// Added by racekit.\nrequire %s v0.0.0\n\nreplace %s => %s\n", RTModule, RTModule, rtDir)
	writeReplaces(&b, replaces)
	b.WriteString(extra)
	h := sha256.New()
	h.Write(b.Bytes())
	h.Write([]byte{0})
	h.Write(sum)
	dir := filepath.Join(cache, "mod", hex.EncodeToString(h.Sum(nil)[:12]))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "go.mod")
	if err := writeAtomic(p, b.Bytes()); err != nil {
		return "", err
	}
	if err := writeAtomic(filepath.Join(dir, "go.sum"), sum); err != nil {
		return "", err
	}
	return p, nil
}

// writeReplaces writes a replace directive per module of replaces, in
// order (a go.mod's and a go.work's are written alike).
func writeReplaces(b *bytes.Buffer, replaces map[string]string) {
	var paths []string
	for p := range replaces {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(b, "replace %s => %s\n", p, replaces[p])
	}
}

// writeWorkFile writes the go.work file the overlay puts in place of the
// user's (at the same path, so that its relative paths and go.work.sum
// stay valid): the user's, plus a use of the runtime copy and the
// replacements of dependency modules by their instrumented copies.
func writeWorkFile(work, rtDir, cache string, replaces map[string]string) (string, error) {
	data, err := os.ReadFile(work)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n// Added by racekit.\nuse %s\n", rtDir)
	writeReplaces(&b, replaces)
	return writeCached(cache, "work", ".work", b.Bytes())
}
