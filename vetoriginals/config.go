package vetoriginals

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// originalsConfig writes, next to vet's configuration cfg, a copy whose
// GoFiles name the user's files in place of their instrumented copies
// (the overlay's replacements), without the files racekit adds (a
// TestMain), and returns its path.
func originalsConfig(cfg, overlay string) (string, error) {
	c, err := readToolConfig(cfg)
	if err != nil {
		return "", err
	}
	var files []string
	if err := c.field("GoFiles", &files); err != nil {
		return "", err
	}
	orig, err := overlayOriginals(overlay)
	if err != nil {
		return "", err
	}
	changed := false
	var out []string
	for _, f := range files {
		o, ok := orig[f]
		if !ok {
			out = append(out, f)
			continue
		}
		changed = true
		if _, err := os.Stat(o); err != nil {
			continue // added by racekit: not the user's
		}
		out = append(out, o)
	}
	if !changed {
		return cfg, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	c.m["GoFiles"] = raw
	data, err := json.MarshalIndent(c.m, "", "\t")
	if err != nil {
		return "", err
	}
	p := strings.TrimSuffix(cfg, ".cfg") + ".racekit.cfg"
	return p, os.WriteFile(p, data, 0o666)
}

// A toolConfig is a tool's JSON configuration file (vet's .cfg, the
// compiler's -embedcfg), its fields kept raw so that those racekit does
// not change are written back as they were.
type toolConfig struct {
	path string
	m    map[string]json.RawMessage
}

func readToolConfig(path string) (*toolConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &toolConfig{path: path}
	if err := json.Unmarshal(data, &c.m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// field decodes field key into v; an absent field leaves v as it is.
func (c *toolConfig) field(key string, v any) error {
	raw, ok := c.m[key]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %s: %v", c.path, key, err)
	}
	return nil
}

// overlayOriginals reads the overlay file and returns, for each
// replacement it names, the original path.
func overlayOriginals(overlay string) (map[string]string, error) {
	odata, err := os.ReadFile(overlay)
	if err != nil {
		return nil, err
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(odata, &ov); err != nil {
		return nil, fmt.Errorf("%s: %v", overlay, err)
	}
	orig := make(map[string]string, len(ov.Replace))
	for o, copy := range ov.Replace {
		if copy != "" {
			orig[copy] = o
		}
	}
	return orig, nil
}

// originalEmbeds writes, next to the compiler's embed configuration cfg
// (-embedcfg), a copy whose files name the user's files in place of their
// instrumented copies, and returns its path (cfg itself when no file is a
// copy). The go command embeds what the overlay gives it: a package that
// embeds its own source (fasthttp's tests serve fs.go from an embed.FS
// and compare its length with the file's) would get racekit's copy.
func originalEmbeds(cfg, overlay string) (string, error) {
	c, err := readToolConfig(cfg)
	if err != nil {
		return "", err
	}
	var files map[string]string
	var patterns map[string][]string
	if err := c.field("Files", &files); err != nil {
		return "", err
	}
	if err := c.field("Patterns", &patterns); err != nil {
		return "", err
	}
	orig, err := overlayOriginals(overlay)
	if err != nil {
		return "", err
	}
	changed := false
	for name, path := range files {
		o, ok := orig[path]
		if !ok {
			continue
		}
		changed = true
		if _, err := os.Stat(o); err == nil {
			files[name] = o
			continue
		}
		// Added by racekit (a TestMain): not in a directory the user
		// embeds.
		delete(files, name)
		for p, names := range patterns {
			patterns[p] = slices.DeleteFunc(names, func(n string) bool { return n == name })
		}
	}
	if !changed {
		return cfg, nil
	}
	for k, v := range map[string]any{"Files": files, "Patterns": patterns} {
		if _, ok := c.m[k]; !ok {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		c.m[k] = raw
	}
	data, err := json.Marshal(c.m)
	if err != nil {
		return "", err
	}
	p := cfg + ".racekit"
	return p, os.WriteFile(p, data, 0o666)
}
