package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Problem is one finding about a config file: a syntax or type error, an
// unknown key, a failed validation rule, a missing environment variable, or
// (in Config.Warnings) a clamped value.
type Problem struct {
	File string // the path given to Load/Parse ("<config>" when none)
	Line int    // 1-based line of the key in the file; 0 when the key is not in the file (a default)
	Key  string // dotted key in TOML form, e.g. `upstreams.fs.command`; "" for whole-file problems
	Msg  string // the message; it already names Key, and never contains a secret value
}

// String renders the problem as "file:line: msg" ("file: msg" when Line is 0).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Error is the error Load and Parse return for an invalid config: every
// problem found, in file order (problems about keys absent from the file
// last). Error() lists one problem per line.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Load reads the TOML file at path and returns the validated config, with
// defaults filled in, ${VAR} references expanded from the process
// environment (os.LookupEnv), and relative paths resolved against the
// file's folder. An unreadable file yields a plain error wrapping the
// os error; an invalid file yields *Error.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path, os.LookupEnv)
}

// Parse decodes data (TOML text) as a config file. path names the file in
// messages and is the base for relative paths (cwd, command paths with a
// slash, telemetry.session_log); with path "" relative paths stay as they
// are. getenv resolves ${VAR} references (nil means os.LookupEnv).
//
// Decoding is strict: unknown keys (also keys that differ from a known key
// only by case) and values of the wrong TOML type are errors naming the key
// and its line. Out-of-range limits are clamped and reported in
// Config.Warnings (SPEC §4). All problems are collected; the returned error
// is *Error and never contains a value that came from the environment or a
// bearer/endpoint token.
func Parse(data []byte, path string, getenv func(string) (string, bool)) (*Config, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	p := &parser{file: path}
	if p.file == "" {
		p.file = "<config>"
	}
	text := string(data)

	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Problems: []Problem{{File: p.file, Line: pe.Position.Line, Msg: "TOML syntax: " + pe.Message}}}
		}
		return nil, &Error{Problems: []Problem{{File: p.file, Msg: "TOML: " + err.Error()}}}
	}
	p.lines = scanKeyLines(text)
	p.raw = raw
	p.checkTable(raw, reflect.TypeOf(Config{}), nil)

	src := text
	if len(p.problems) > 0 {
		// Decode what is left after dropping the bad keys, so that the
		// rule checks below still run and every problem is reported at once.
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
			return nil, p.result(nil)
		}
		src = buf.String()
	}
	cfg := &Config{Path: path}
	md, err := toml.Decode(src, cfg)
	if err != nil {
		// Not expected: checkTable mirrors the decoder's rules.
		p.errf(nil, "", "TOML: %s", err)
		return nil, p.result(nil)
	}
	// Safety net: anything the decoder did not consume is unknown too.
	for _, k := range md.Undecoded() {
		if !p.reported(k) {
			p.problems = append(p.problems, Problem{File: p.file, Line: p.lines.line(k), Key: k.String(),
				Msg: fmt.Sprintf("unknown key %q", k.String())})
			p.unknown = append(p.unknown, k)
		}
	}

	dir := ""
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			dir = filepath.Dir(abs)
		} else {
			dir = filepath.Dir(path)
		}
	}
	p.cfg = cfg
	p.fillNames()
	p.expandAll(withBuiltins(getenv, dir))
	p.collectLiteralSecrets()
	p.defaults()
	p.resolvePaths(dir)
	p.securityDefaults(path, dir)
	p.validate()
	cfg.redactor = cfg.buildRedactor()
	if len(p.problems) > 0 {
		return nil, p.result(cfg)
	}
	sortProblems(p.warnings)
	for _, w := range p.warnings {
		cfg.Warnings = append(cfg.Warnings, cfg.Redact(w.String()))
	}
	for _, w := range p.stdioWarnings {
		cfg.stdioWarnings = append(cfg.stdioWarnings, cfg.Redact(w.String()))
	}
	return cfg, nil
}

// AllWarnings is Warnings and, while Server.Transport is "stdio", the
// findings that hold only then. Call it after the command line's overrides
// (serve --transport http): a bearer token has effect on the HTTP front
// that flag starts.
func (c *Config) AllWarnings() []string {
	if c.Server.Transport != "stdio" || len(c.stdioWarnings) == 0 {
		return c.Warnings
	}
	return append(slices.Clone(c.Warnings), c.stdioWarnings...)
}

// parser carries the state of one Parse call.
type parser struct {
	file     string
	lines    keyLines
	raw      map[string]any // the decoded document, bad keys removed
	cfg      *Config
	problems []Problem
	warnings []Problem
	// stdioWarnings: Config.stdioWarnings before formatting.
	stdioWarnings []Problem
	unknown       []toml.Key // keys reported unknown or of the wrong type
}

func (p *parser) result(cfg *Config) error {
	sortProblems(p.problems)
	if cfg != nil {
		for i := range p.problems {
			p.problems[i].Msg = cfg.Redact(p.problems[i].Msg)
		}
	}
	return &Error{Problems: p.problems}
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		li, lj := ps[i].Line, ps[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
}

// keyString renders a key path the way TOML (and toml.Key) writes it.
func keyString(path []string) string { return toml.Key(path).String() }

func (p *parser) problem(path []string, suffix, format string, args ...any) Problem {
	key := keyString(path) + suffix
	msg := fmt.Sprintf(format, args...)
	if key != "" {
		msg = key + ": " + msg
	}
	return Problem{File: p.file, Line: p.lines.line(path), Key: key, Msg: msg}
}

// errf records an error about the key path (suffix, e.g. "[2]", is added
// to the key shown).
func (p *parser) errf(path []string, suffix, format string, args ...any) {
	p.problems = append(p.problems, p.problem(path, suffix, format, args...))
}

// warnf records a warning about the key path.
func (p *parser) warnf(path []string, format string, args ...any) {
	p.warnings = append(p.warnings, p.problem(path, "", format, args...))
}

// defined reports whether the key path is present in the document (and was
// not dropped for having the wrong type).
func (p *parser) defined(path ...string) bool {
	var cur any = p.raw
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// reported reports whether k or one of its ancestors was already reported
// as unknown or badly typed.
func (p *parser) reported(k toml.Key) bool {
	for _, u := range p.unknown {
		if len(u) <= len(k) && reflect.DeepEqual([]string(u), []string(k[:len(u)])) {
			return true
		}
	}
	return false
}

var durationType = reflect.TypeOf(Duration{})

// field is one known key of a TOML table.
type field struct {
	name string
	typ  reflect.Type
}

// tableFields lists the TOML keys of struct type t, in declaration order,
// flattening untagged embedded structs the way BurntSushi/toml does.
func tableFields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, tableFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name := strings.Split(tag, ",")[0]
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name, f.Type})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendKey(path []string, k string) []string {
	return append(append(make([]string, 0, len(path)+1), path...), k)
}

// checkTable checks the TOML table m against struct type t: unknown keys
// and values of the wrong type are reported and deleted from m.
func (p *parser) checkTable(m map[string]any, t reflect.Type, path []string) {
	fields := tableFields(t)
	for _, k := range sortedKeys(m) {
		kp := appendKey(path, k)
		var ft reflect.Type
		for _, f := range fields {
			if f.name == k {
				ft = f.typ
			}
		}
		if ft == nil {
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.name
			}
			msg := fmt.Sprintf("unknown key %q", keyString(kp))
			if s := suggest(k, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else if ks := keysWithPart(k, names); len(ks) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(ks, " or "))
			}
			p.problems = append(p.problems, Problem{File: p.file, Line: p.lines.line(kp), Key: keyString(kp), Msg: msg})
			p.unknown = append(p.unknown, kp)
			delete(m, k)
			continue
		}
		if !p.checkValue(m[k], ft, kp) {
			p.unknown = append(p.unknown, kp)
			delete(m, k)
		}
	}
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []map[string]any:
		return "array of tables"
	case []any:
		return "array"
	case time.Time:
		return "datetime"
	}
	return fmt.Sprintf("%T", v)
}

// wantType names the TOML type expected for Go type t.
func wantType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return `duration string (like "30s")`
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Struct, reflect.Map:
		return "table"
	case reflect.Slice:
		return "array of " + wantType(t.Elem()) + "s"
	}
	return t.String()
}

// scalarOK reports whether v has the TOML type Go scalar type t wants.
func scalarOK(v any, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		_, ok := v.(string)
		return ok
	case reflect.Bool:
		_, ok := v.(bool)
		return ok
	case reflect.Int, reflect.Int64, reflect.Int32:
		_, ok := v.(int64)
		return ok
	case reflect.Float64:
		switch v.(type) {
		case float64, int64:
			return true
		}
	}
	return false
}

// checkValue checks one value against Go type t and reports a problem at
// path when it does not fit. It returns false when the value must be dropped.
func (p *parser) checkValue(v any, t reflect.Type, path []string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wrong := func() bool {
		p.errf(path, "", "wrong type: expected %s, got %s", wantType(t), tomlType(v))
		return false
	}
	if t == durationType {
		s, ok := v.(string)
		if !ok {
			return wrong()
		}
		var d Duration
		if err := d.UnmarshalText([]byte(s)); err != nil {
			p.errf(path, "", "%v", err)
			return false
		}
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		p.checkTable(m, t, path)
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return wrong()
		}
		for _, k := range sortedKeys(m) {
			kp := appendKey(path, k)
			if !p.checkValue(m[k], t.Elem(), kp) {
				p.unknown = append(p.unknown, kp)
				delete(m, k)
			}
		}
		return true
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return wrong()
		}
		good := true
		for i, e := range arr {
			if !scalarOK(e, t.Elem()) {
				p.errf(path, fmt.Sprintf("[%d]", i), "wrong type: expected %s, got %s", wantType(t.Elem()), tomlType(e))
				good = false
			}
		}
		return good
	default:
		if !scalarOK(v, t) {
			return wrong()
		}
		return true
	}
}

// Suggest returns the candidate closest to k (case-insensitive edit
// distance at most 2, or a third of k's length when longer), or "": the
// "did you mean" of config keys, and of the command line's commands.
func Suggest(k string, candidates []string) string { return suggest(k, candidates) }

// suggest is Suggest.
func suggest(k string, candidates []string) string {
	best, bestD := "", -1
	lk := strings.ToLower(k)
	limit := max(2, len(k)/3)
	for _, c := range candidates {
		d := editDistance(lk, strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// keysWithPart is the keys among candidates (at most 3, quoted, in their
// order) of which k is one '_'-separated part ("timeout" → "call_timeout",
// "startup_timeout"): the near misses suggest cannot see because the key
// is a whole word of a longer one.
func keysWithPart(k string, candidates []string) []string {
	lk := strings.ToLower(k)
	var out []string
	for _, c := range candidates {
		if len(out) == 3 {
			break
		}
		if slices.Contains(strings.Split(strings.ToLower(c), "_"), lk) {
			out = append(out, strconv.Quote(c))
		}
	}
	return out
}

// editDistance is the optimal-string-alignment distance between a and b
// (bytes): Levenshtein's insertions, deletions and substitutions, plus the
// swap of two adjacent bytes as one edit ("lsit" is one edit from "list").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
