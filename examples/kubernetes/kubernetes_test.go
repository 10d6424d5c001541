// Package kubernetes_test checks the Kubernetes example manifests: that each
// file is valid YAML with the fields Kubernetes requires of its kind, that
// the Deployment, Service, ConfigMap and Secret agree with each other, and
// that the ConfigMap's config.toml loads with the Secret's variables.
package kubernetes_test

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mcp-toolsearch/mcp-toolsearch/config"
)

// doc is one YAML document, decoded generically.
type doc = map[string]any

// load decodes every document of file, failing on a syntax error or a
// duplicate key (yaml.v3 rejects duplicates).
func load(t *testing.T, file string) []doc {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []doc
	for {
		var d doc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no YAML document", file)
	}
	return out
}

// get walks d along path (map keys, or int indexes into lists); nil when
// absent.
func get(d any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := d.(map[string]any)
			if !ok {
				return nil
			}
			d = m[k]
		case int:
			l, ok := d.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			d = l[k]
		}
	}
	return d
}

func str(t *testing.T, file string, d any, path ...any) string {
	t.Helper()
	s, ok := get(d, path...).(string)
	if !ok || s == "" {
		t.Fatalf("%s: %v must be a non-empty string, got %#v", file, path, get(d, path...))
	}
	return s
}

// byKind loads every manifest of the kustomization and indexes the proxy's
// by kind, and the state store's (label app.kubernetes.io/name
// "mcp-toolsearch-state") by kind in store.
func byKind(t *testing.T) (out, store map[string]doc) {
	t.Helper()
	k := load(t, "kustomization.yaml")[0]
	out, store = map[string]doc{}, map[string]doc{}
	for _, r := range get(k, "resources").([]any) {
		file := r.(string)
		for _, d := range load(t, file) {
			str(t, file, d, "apiVersion")
			kind := str(t, file, d, "kind")
			str(t, file, d, "metadata", "name")
			into := out
			if get(d, "metadata", "labels", "app.kubernetes.io/name") == "mcp-toolsearch-state" {
				into = store
			}
			if _, dup := into[kind]; dup {
				t.Fatalf("%s: a second %s", file, kind)
			}
			into[kind] = d
		}
	}
	for _, want := range []string{"Namespace", "ConfigMap", "Secret", "Deployment", "Service"} {
		if out[want] == nil {
			t.Errorf("kustomization.yaml: no %s among its resources", want)
		}
	}
	for _, want := range []string{"StatefulSet", "Service"} {
		if store[want] == nil {
			t.Errorf("kustomization.yaml: no state store %s among its resources", want)
		}
	}
	return out, store
}

func TestManifests(t *testing.T) {
	m, store := byKind(t)
	dep, svc, cm, sec := m["Deployment"], m["Service"], m["ConfigMap"], m["Secret"]

	// Deployment: selector matches the pod labels and the Service selector.
	labels := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range get(dep, "spec", "selector", "matchLabels").(map[string]any) {
		if labels[k] != v {
			t.Errorf("deployment: selector %s=%v does not match the pod labels %v", k, v, labels)
		}
	}
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		if labels[k] != v {
			t.Errorf("service: selector %s=%v selects no pod of the deployment (labels %v)", k, v, labels)
		}
	}
	if r, _ := get(dep, "spec", "replicas").(int); r < 2 {
		t.Errorf("deployment: replicas = %v; the example shows scale-out", get(dep, "spec", "replicas"))
	}
	if a := get(svc, "spec", "sessionAffinity"); a != nil && a != "None" {
		t.Errorf("service: sessionAffinity %v; stateless replicas need none", a)
	}

	c := get(dep, "spec", "template", "spec", "containers", 0)
	str(t, "deployment.yaml", c, "image")
	args := get(c, "args").([]any)
	cfgPath := ""
	for i, a := range args {
		if a == "--config" && i+1 < len(args) {
			cfgPath = args[i+1].(string)
		}
	}
	port := get(c, "ports", 0, "containerPort").(int)
	portName := str(t, "deployment.yaml", c, "ports", 0, "name")
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		path := str(t, "deployment.yaml", c, probe, "httpGet", "path")
		if !strings.HasPrefix(path, "/healthz") {
			t.Errorf("deployment: %s path %q, want /healthz", probe, path)
		}
		if p := get(c, probe, "httpGet", "port"); p != portName && p != port {
			t.Errorf("deployment: %s port %v is not the container's port %s/%d", probe, p, portName, port)
		}
		if get(c, probe, "httpGet", "httpHeaders", 0, "name") != "Host" {
			t.Errorf("deployment: %s sends no Host header; the proxy's DNS-rebinding guard refuses a pod IP", probe)
		}
	}
	if tp := get(svc, "spec", "ports", 0, "targetPort"); tp != portName && tp != port {
		t.Errorf("service: targetPort %v is not the container's port %s/%d", tp, portName, port)
	}

	// The config is mounted where --config points.
	mount := ""
	for _, vm := range get(c, "volumeMounts").([]any) {
		vol := get(vm, "name").(string)
		for _, v := range get(dep, "spec", "template", "spec", "volumes").([]any) {
			if get(v, "name") == vol && get(v, "configMap", "name") == get(cm, "metadata", "name") {
				mount = get(vm, "mountPath").(string)
			}
		}
	}
	if mount == "" || !strings.HasPrefix(cfgPath, mount+"/") {
		t.Errorf("deployment: --config %q is not inside the ConfigMap's mount %q", cfgPath, mount)
	}
	key := strings.TrimPrefix(cfgPath, mount+"/")
	tomlText := str(t, "configmap.yaml", cm, "data", key)

	// The Secret feeds the environment, and holds every ${VAR} of the TOML.
	if get(c, "envFrom", 0, "secretRef", "name") != get(sec, "metadata", "name") {
		t.Errorf("deployment: envFrom does not name the Secret %v", get(sec, "metadata", "name"))
	}
	env := map[string]string{}
	for k, v := range get(sec, "stringData").(map[string]any) {
		env[k] = v.(string)
	}
	for _, ref := range regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`).FindAllStringSubmatch(tomlText, -1) {
		if _, ok := env[ref[1]]; !ok {
			t.Errorf("configmap: ${%s} is not in the Secret", ref[1])
		}
	}
	cfg, err := config.Parse([]byte(tomlText), "/etc/mcp-toolsearch/config.toml", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("configmap %s does not load: %v", key, err)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("configmap %s: warnings %v", key, cfg.Warnings)
	}
	if !cfg.Server.Stateless || cfg.Server.Transport != "http" {
		t.Errorf("config: stateless=%v transport=%q; the example runs stateless HTTP replicas", cfg.Server.Stateless, cfg.Server.Transport)
	}
	if !strings.HasSuffix(cfg.Server.Listen, ":"+strconv.Itoa(port)) {
		t.Errorf("config: listen %q is not the container port %d", cfg.Server.Listen, port)
	}
	svcName := get(svc, "metadata", "name").(string)
	if !slices.Contains(cfg.Server.AllowedHosts, svcName) {
		t.Errorf("config: allowed_hosts %v lacks the Service name %q", cfg.Server.AllowedHosts, svcName)
	}

	// The state store: the config points at its Service and port; the
	// StatefulSet's pods are that Service's, take their password from the
	// proxy's Secret and keep an append-only file on a volume.
	ss, ssvc := store["StatefulSet"], store["Service"]
	u, err := url.Parse(cfg.Server.StateStoreURL)
	if err != nil || u.Hostname() != get(ssvc, "metadata", "name") {
		t.Fatalf("config: state_store %q does not name the store's Service %v", cfg.Server.StateStoreURL, get(ssvc, "metadata", "name"))
	}
	if strconv.Itoa(get(ssvc, "spec", "ports", 0, "port").(int)) != u.Port() {
		t.Errorf("config: state_store port %s is not the store Service's %v", u.Port(), get(ssvc, "spec", "ports", 0, "port"))
	}
	if pw, _ := u.User.Password(); pw != env["REDIS_PASSWORD"] {
		t.Errorf("config: state_store's password is not the Secret's REDIS_PASSWORD")
	}
	if len(cfg.Server.StateStoreKeyBytes()) != 32 {
		t.Errorf("config: state_store_key is not 32 bytes")
	}
	slabels := get(ss, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range get(ssvc, "spec", "selector").(map[string]any) {
		if slabels[k] != v {
			t.Errorf("store service: selector %s=%v selects no pod of the StatefulSet", k, v)
		}
	}
	rc := get(ss, "spec", "template", "spec", "containers", 0)
	var rargs []string
	for _, a := range get(rc, "args").([]any) {
		rargs = append(rargs, a.(string))
	}
	if joined := strings.Join(rargs, " "); !strings.Contains(joined, "--requirepass $(REDIS_PASSWORD)") || !strings.Contains(joined, "--appendonly yes") {
		t.Errorf("store: args %q; want --requirepass $(REDIS_PASSWORD) and --appendonly yes", joined)
	}
	if get(rc, "env", 0, "valueFrom", "secretKeyRef", "name") != get(sec, "metadata", "name") || get(rc, "env", 0, "valueFrom", "secretKeyRef", "key") != "REDIS_PASSWORD" {
		t.Errorf("store: REDIS_PASSWORD does not come from the Secret")
	}
	if get(ss, "spec", "volumeClaimTemplates", 0, "metadata", "name") != get(rc, "volumeMounts", 0, "name") {
		t.Errorf("store: the data volume is not mounted")
	}
}
