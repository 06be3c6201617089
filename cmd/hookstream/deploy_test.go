package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	composecli "github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/hookstream/hookstream/egress"
	"github.com/hookstream/hookstream/internal/commalist"
	"github.com/hookstream/hookstream/internal/secretbox"
	"github.com/hookstream/hookstream/internal/testkit/testenv"
)

// The deployment files (deploy/compose, deploy/k8s, deploy/Dockerfile) are held here to the
// binary they run: its commands, the settings each command reads (the variables table), the
// ports of its listen addresses and its probe routes. A manifest that sets a variable its
// command ignores, misses one it needs, or probes a port nothing listens on fails this test.

var deployDir = filepath.Join("..", "..", "deploy")

// process is one container of a manifest that runs the hookstream binary.
type process struct {
	where string   // for messages: "compose service sender-1"
	args  []string // the command line after the binary: [sender], [topics create]
	// env holds the container's HOOKSTREAM_* variables: a literal value, or a stand-in when the
	// value comes from elsewhere (a Secret, a field, compose interpolation); refs names those.
	env  map[string]string
	refs map[string]string // variable → where its value comes from: secret, config, field, interpolated
	// ports are the container's declared ports; probes maps a probe route to its port (k8s).
	ports   []int
	probes  map[string]int
	oneShot bool // a Job or a run-once service: no probes, no listener
}

// sensitive are the settings whose values must never be written into a manifest: they come
// from a Secret (k8s) or from the environment of `docker compose` (compose).
var sensitive = []string{"database-url", "secret-key", "secret-keys", "admin-token"}

// required are the settings a deployed process must be given when its command reads them: where
// to connect and listen (the built-in defaults are loopback, for `hookstream dev`) and the keys.
var required = []string{"database-url", "kafka-brokers", "metrics-addr", "admin-addr", "secret-key", "admin-token"}

// standIn is a valid value for a variable whose manifest value is a reference.
func standIn(t *testing.T, flagName string) string {
	t.Helper()
	switch flagName {
	case "database-url":
		return "postgres://hookstream@db.example:5432/hookstream"
	case "secret-key":
		k, err := secretbox.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		return k
	case "kafka-brokers":
		return "kafka.example:9092"
	case "instance-id":
		return "pod-0"
	case "replication-factor":
		return "3"
	default:
		return "stand-in"
	}
}

// standInFile is a file of this machine holding what the file named by the variable holds in a
// pod (a CA or client certificate, its key, a password, a token), for the settings' own checks
// of it: the manifests name files mounted from Secrets, which are not here.
func standInFile(t *testing.T, variable string) string {
	t.Helper()
	dir := t.TempDir()
	issued := testenv.NewCA(t, "stand-in").Client(t, "stand-in")
	content := []byte("stand-in\n")
	switch {
	case strings.HasSuffix(variable, "_CA_FILE"), strings.HasSuffix(variable, "_CERT_FILE"):
		content = issued.CertPEM
	case strings.HasSuffix(variable, "_KEY_FILE"):
		content = issued.KeyPEM
	case variable == "HOOKSTREAM_SECRET_KEYS_FILE":
		k, err := secretbox.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		content = []byte("standin:" + k + "\n")
	}
	path := filepath.Join(dir, strings.ToLower(variable))
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// settingsOf parses p's environment as the binary does, with only p's variables set, and fails
// the test where the binary would refuse them.
func settingsOf(t *testing.T, p process) (settings, bool) {
	t.Helper()
	for _, v := range variables {
		t.Setenv(v.env, "")
		os.Unsetenv(v.env) // t.Setenv restores the variable afterwards
	}
	for name, val := range p.env {
		if strings.HasSuffix(name, "_FILE") && val != "" {
			val = standInFile(t, name) // the file is mounted in the pod, not here
		}
		t.Setenv(name, val)
	}
	cmd := p.args[0]
	args := []string{}
	if cmd == "topics" {
		args = nil // runTopics parses the flags after its subcommand
	}
	s, err := flagsOf(cmd).parse(args, io.Discard)
	if err != nil {
		t.Errorf("%s: hookstream %s refuses its environment: %v", p.where, cmd, err)
		return settings{}, false
	}
	return s, true
}

// portOf is the port of a listen address such as 0.0.0.0:9464.
func portOf(t *testing.T, where, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	n, err2 := strconv.Atoi(port)
	if err != nil || err2 != nil {
		t.Errorf("%s: %q is no host:port", where, addr)
	}
	return n
}

// checkProcess holds one container to the binary: a known command, only variables that command
// reads, the ones it needs, no secret written out, values the binary accepts, and a listener on
// the port its probes and declared ports name. It returns the parsed settings.
func checkProcess(t *testing.T, p process) (settings, bool) {
	t.Helper()
	if len(p.args) == 0 {
		t.Errorf("%s: no command: the image's entrypoint is the binary, its first argument the command", p.where)
		return settings{}, false
	}
	cmd := p.args[0]
	if !slices.ContainsFunc(commands(), func(c command) bool { return c.name == cmd }) {
		t.Errorf("%s: hookstream has no command %q", p.where, cmd)
		return settings{}, false
	}
	if cmd == "topics" && (len(p.args) != 2 || p.args[1] != "create") {
		t.Errorf("%s: runs topics %v, want topics create", p.where, p.args[1:])
	}
	flags := flagsOf(cmd)
	for name := range p.env {
		v, ok := variableOfEnv(name)
		switch {
		case !ok:
			t.Errorf("%s: sets %s, which is no variable of hookstream", p.where, name)
		case flags.Lookup(v.flag) == nil:
			t.Errorf("%s: sets %s, which hookstream %s does not read", p.where, name, cmd)
		}
	}
	for _, f := range required {
		v, _ := variableOf(f)
		if cmd == "admin" && f == "metrics-addr" {
			continue // optional: without it admin serves its metrics on the API's address
		}
		if flags.Lookup(f) != nil {
			if _, ok := p.env[v.env]; !ok {
				t.Errorf("%s: hookstream %s reads %s and the manifest does not set it (the default, %q, is for hookstream dev)", p.where, cmd, v.env, v.def)
			}
		}
	}
	for _, f := range sensitive {
		v, _ := variableOf(f)
		if _, set := p.env[v.env]; set && p.refs[v.env] == "" {
			t.Errorf("%s: %s is written into the manifest; take it from a Secret or the environment", p.where, v.env)
		}
	}
	s, ok := settingsOf(t, p)
	if !ok {
		return s, false
	}
	// The listener: the component commands serve probes and metrics on HOOKSTREAM_METRICS_ADDR,
	// admin on HOOKSTREAM_METRICS_ADDR when the manifest sets it, else on HOOKSTREAM_ADMIN_ADDR,
	// on all interfaces (the kubelet and Prometheus connect from outside the pod) and on the port
	// the binary's default names, which the docs and alerts use.
	addrFlag := ""
	switch {
	case cmd == "admin":
		addrFlag = "admin-addr"
		if _, ok := p.env["HOOKSTREAM_METRICS_ADDR"]; ok {
			addrFlag = "metrics-addr"
		}
	case flags.Lookup("metrics-addr") != nil:
		addrFlag = "metrics-addr"
	}
	if p.oneShot || addrFlag == "" {
		if !p.oneShot || addrFlag != "" {
			t.Errorf("%s: hookstream %s runs as a one-shot: %v, a listener: %q", p.where, cmd, p.oneShot, addrFlag)
		}
		return s, true
	}
	v, _ := variableOf(addrFlag)
	addr := p.env[v.env]
	host, _, _ := net.SplitHostPort(addr)
	if host != "0.0.0.0" && host != "" {
		t.Errorf("%s: %s=%s listens on %s only; probes and scrapes come from outside the container", p.where, v.env, addr, host)
	}
	port := portOf(t, p.where, addr)
	if def := portOf(t, "default of "+v.env, v.def); port != def {
		t.Errorf("%s: %s port %d, the binary's default (and the docs') is %d", p.where, v.env, port, def)
	}
	if p.ports != nil && !slices.Contains(p.ports, port) {
		t.Errorf("%s: declares ports %v, not %d where hookstream %s listens", p.where, p.ports, port, cmd)
	}
	if p.probes != nil {
		for _, route := range []string{"/healthz", "/readyz"} {
			if got, ok := p.probes[route]; !ok || got != port {
				t.Errorf("%s: probe %s on port %d (set: %v), want it on %d", p.where, route, got, ok, port)
			}
		}
	}
	return s, true
}

func variableOfEnv(name string) (variable, bool) {
	for _, v := range variables {
		if v.env == name {
			return v, true
		}
	}
	return variable{}, false
}

// componentCommands are the long-running commands, each of which a deployment runs: every
// command that serves probes and metrics, and admin.
func componentCommands() []string {
	var out []string
	for _, c := range commands() {
		if c.name != "dev" && (slices.Contains(c.reads, "metrics-addr") || c.name == "admin") {
			out = append(out, c.name)
		}
	}
	return out
}

// The image: the binary built from ./cmd/hookstream as the entrypoint, exposing the ports of
// its listen addresses.
func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(raw)
	if !regexp.MustCompile(`(?m)^RUN .*go build .*-o /out/hookstream \./cmd/hookstream$`).MatchString(df) {
		t.Error("Dockerfile does not build ./cmd/hookstream into /out/hookstream")
	}
	if !regexp.MustCompile(`(?m)^COPY --from=build /out/hookstream /hookstream$`).MatchString(df) ||
		!regexp.MustCompile(`(?m)^ENTRYPOINT \["/hookstream"\]$`).MatchString(df) {
		t.Error(`Dockerfile: the entrypoint is not the binary (ENTRYPOINT ["/hookstream"]), so a manifest's first argument would not be the command`)
	}
	m := regexp.MustCompile(`(?m)^EXPOSE (.+)$`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile exposes no port")
	}
	for _, f := range []string{"admin-addr", "metrics-addr"} {
		v, _ := variableOf(f)
		if p := strconv.Itoa(portOf(t, v.env, v.def)); !slices.Contains(strings.Fields(m[1]), p) {
			t.Errorf("Dockerfile EXPOSE %s lacks %s, the port of %s", m[1], p, v.env)
		}
	}
}

// ---- compose ----

// composeFile is the part of the Compose specification the file uses. Unknown keys are refused,
// as `docker compose config` refuses them; extension fields (x-…) are kept aside.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Networks map[string]*struct {
		Internal bool `yaml:"internal"`
	} `yaml:"networks"`
	Volumes    map[string]struct{} `yaml:"volumes"`
	Extensions map[string]any      `yaml:",inline"`
}

type composeService struct {
	Image           string                                `yaml:"image"`
	Build           *struct{ Context, Dockerfile string } `yaml:"build"`
	Restart         string                                `yaml:"restart"`
	StopGracePeriod string                                `yaml:"stop_grace_period"`
	Command         []string                              `yaml:"command"`
	Environment     map[string]string                     `yaml:"environment"`
	DependsOn       map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Networks    []string `yaml:"networks"`
	Ports       []string `yaml:"ports"`
	Volumes     []string `yaml:"volumes"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		Retries     int      `yaml:"retries"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
}

// interpolation is Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}.
var interpolation = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(?::?[-?][^}]*)?\}`)

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	var f composeFile
	readStrictYAML(t, filepath.Join(deployDir, "compose", "compose.yaml"), &f)
	return f
}

// readStrictYAML decodes the YAML document at path into v and fails t on a field v does not
// have, so a misspelled key fails the test instead of being ignored.
func readStrictYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
}

// The compose file is valid as Compose reads it, runs Kafka in KRaft mode and PostgreSQL with
// logical replication, every component as its own service (two of each but the one-shots), and
// keeps the sender off the database's network.
func TestComposeFile(t *testing.T) {
	f := loadCompose(t)
	for k := range f.Extensions {
		if !strings.HasPrefix(k, "x-") {
			t.Errorf("compose.yaml: unknown top-level key %q", k)
		}
	}
	if f.Name == "" || len(f.Services) == 0 {
		t.Fatal("compose.yaml: no name or no services")
	}
	kafka, pg := f.Services["kafka"], f.Services["postgres"]
	if kafka.Environment["KAFKA_PROCESS_ROLES"] != "broker,controller" || kafka.Environment["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "" {
		t.Errorf("kafka service is not a KRaft broker and controller: %v", kafka.Environment)
	}
	if !slices.Contains(pg.Command, "wal_level=logical") {
		t.Errorf("postgres service runs %v, without wal_level=logical (cdc needs logical replication)", pg.Command)
	}
	brokers := strings.TrimPrefix(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], "PLAINTEXT://")

	image := ""
	byCommand := map[string][]string{}
	instanceIDs := map[string]string{}
	for name, svc := range f.Services {
		for _, n := range svc.Networks {
			if _, ok := f.Networks[n]; !ok {
				t.Errorf("service %s joins network %q, which is not declared", name, n)
			}
		}
		for dep := range svc.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("service %s depends on %q, which is no service", name, dep)
			}
		}
		for _, v := range svc.Volumes {
			if vol, _, _ := strings.Cut(v, ":"); !strings.HasPrefix(vol, ".") && !strings.HasPrefix(vol, "/") {
				if _, ok := f.Volumes[vol]; !ok {
					t.Errorf("service %s mounts volume %q, which is not declared", name, vol)
				}
			}
		}
		if name == "kafka" || name == "postgres" {
			continue
		}
		// Every other service runs the hookstream image.
		if image == "" {
			image = svc.Image
		}
		if svc.Image != image || svc.Build == nil || svc.Build.Dockerfile != "deploy/Dockerfile" {
			t.Errorf("service %s: image %q built from %+v; every hookstream service runs one image, %q from deploy/Dockerfile", name, svc.Image, svc.Build, image)
		}
		p := process{where: "compose service " + name, args: svc.Command, env: map[string]string{}, refs: map[string]string{},
			oneShot: svc.Restart == "no"}
		for k, val := range svc.Environment {
			p.env[k] = val
			if interpolation.MatchString(val) {
				p.refs[k] = "interpolated"
				v, _ := variableOfEnv(k)
				if !strings.HasPrefix(val, "postgres://") {
					p.env[k] = standIn(t, v.flag)
				} else {
					p.env[k] = interpolation.ReplaceAllString(val, "pw")
				}
			}
		}
		for _, port := range svc.Ports {
			// [host_ip:]host_port:container_port
			parts := strings.Split(port, ":")
			n, err := strconv.Atoi(parts[len(parts)-1])
			if err != nil {
				t.Errorf("service %s: port %q", name, port)
			}
			p.ports = append(p.ports, n)
		}
		s, ok := checkProcess(t, p)
		if !ok {
			continue
		}
		cmd := svc.Command[0]
		byCommand[cmd] = append(byCommand[cmd], name)
		if !p.oneShot {
			// The image has no shell and no curl: the binary probes its own /readyz where it
			// listens.
			addr := s.MetricsAddr
			if cmd == "admin" {
				addr = s.AdminAddr
			}
			want := []string{"CMD", "/hookstream", "probe", fmt.Sprintf("http://127.0.0.1:%d/readyz", portOf(t, name, addr))}
			if svc.Healthcheck == nil || !slices.Equal(svc.Healthcheck.Test, want) {
				t.Errorf("service %s: healthcheck %+v, want the test %q", name, svc.Healthcheck, want)
			}
		}
		if !p.oneShot {
			for _, setup := range []string{"migrate", "topics"} {
				if svc.DependsOn[setup].Condition != "service_completed_successfully" {
					t.Errorf("service %s does not wait for %s to complete", name, setup)
				}
			}
		}
		if flagsOf(cmd).Lookup("kafka-brokers") != nil && strings.Join(s.KafkaBrokers, ",") != brokers {
			t.Errorf("service %s: brokers %v, the kafka service advertises %s", name, s.KafkaBrokers, brokers)
		}
		if flagsOf(cmd).Lookup("database-url") != nil {
			if !strings.Contains(s.DatabaseURL, "@postgres:5432/"+pg.Environment["POSTGRES_DB"]+"?") {
				t.Errorf("service %s: database URL %q is not the postgres service's database", name, s.DatabaseURL)
			}
			if !sharesNetwork(svc.Networks, pg.Networks) {
				t.Errorf("service %s uses PostgreSQL and shares no network with it", name)
			}
		}
		if flagsOf(cmd).Lookup("kafka-brokers") != nil && !sharesNetwork(svc.Networks, kafka.Networks) {
			t.Errorf("service %s uses Kafka and shares no network with it", name)
		}
		if flagsOf(cmd).Lookup("instance-id") != nil {
			if other, dup := instanceIDs[cmd+"/"+s.InstanceID]; dup {
				t.Errorf("services %s and %s of %s share HOOKSTREAM_INSTANCE_ID %q", other, name, cmd, s.InstanceID)
			}
			instanceIDs[cmd+"/"+s.InstanceID] = name
		}
		if cmd == "sender" {
			if _, set := svc.Environment["HOOKSTREAM_DATABASE_URL"]; set {
				t.Errorf("service %s: the sender has a database variable (R28)", name)
			}
			if sharesNetwork(svc.Networks, pg.Networks) {
				t.Errorf("service %s: the sender shares a network with PostgreSQL (%v, %v): R28", name, svc.Networks, pg.Networks)
			}
		}
	}
	for _, n := range pg.Networks {
		if f.Networks[n] == nil || !f.Networks[n].Internal {
			t.Errorf("postgres joins network %q, which is not internal", n)
		}
	}
	for _, cmd := range componentCommands() {
		if len(byCommand[cmd]) < 2 {
			t.Errorf("compose runs %s as %v; want two services (cdc: one reads, one stands by)", cmd, byCommand[cmd])
		}
	}
	for _, cmd := range []string{"migrate", "topics"} {
		if len(byCommand[cmd]) != 1 {
			t.Errorf("compose runs %s as %v; want one one-shot service", cmd, byCommand[cmd])
		}
	}
}

func replicasOf(o k8sObject) string {
	if o.Spec.Replicas == nil {
		return "unset"
	}
	return strconv.Itoa(*o.Spec.Replicas)
}

func sharesNetwork(a, b []string) bool {
	return slices.ContainsFunc(a, func(n string) bool { return slices.Contains(b, n) })
}

// ---- Kubernetes ----

type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"` // ConfigMap
	Spec struct {
		Replicas    *int           `yaml:"replicas"`
		ServiceName string         `yaml:"serviceName"`
		Selector    k8sSelector    `yaml:"selector"` // workloads, PodDisruptionBudget
		Template    k8sPodTemplate `yaml:"template"`
		// PodDisruptionBudget
		MinAvailable   any `yaml:"minAvailable"`
		MaxUnavailable any `yaml:"maxUnavailable"`
		// NetworkPolicy
		PodSelector k8sSelector `yaml:"podSelector"`
		PolicyTypes []string    `yaml:"policyTypes"`
		Egress      []struct {
			To    []k8sPeer `yaml:"to"`
			Ports []struct {
				Protocol string `yaml:"protocol"`
				Port     int    `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"egress"`
	} `yaml:"spec"`
}

type k8sSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type k8sPeer struct {
	IPBlock *struct {
		CIDR   string   `yaml:"cidr"`
		Except []string `yaml:"except"`
	} `yaml:"ipBlock"`
	NamespaceSelector *k8sSelector `yaml:"namespaceSelector"`
	PodSelector       *k8sSelector `yaml:"podSelector"`
}

type k8sPodTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		SecurityContext *k8sSecurityContext `yaml:"securityContext"`
		InitContainers  []k8sContainer      `yaml:"initContainers"`
		Containers      []k8sContainer      `yaml:"containers"`
		Volumes         []k8sVolume         `yaml:"volumes"`
	} `yaml:"spec"`
}

// k8sSecurityContext is the part of a pod's or a container's securityContext the tests read.
type k8sSecurityContext struct {
	RunAsNonRoot *bool `yaml:"runAsNonRoot"`
	RunAsUser    *int  `yaml:"runAsUser"`
	RunAsGroup   *int  `yaml:"runAsGroup"`
	FSGroup      *int  `yaml:"fsGroup"`
}

// k8sVolume is a pod's volume of Secrets: a secret volume or a projected one.
type k8sVolume struct {
	Name   string `yaml:"name"`
	Secret *struct {
		SecretName string         `yaml:"secretName"`
		Items      []k8sKeyToPath `yaml:"items"`
	} `yaml:"secret"`
	Projected *struct {
		Sources []struct {
			Secret *struct {
				Name  string         `yaml:"name"`
				Items []k8sKeyToPath `yaml:"items"`
			} `yaml:"secret"`
		} `yaml:"sources"`
	} `yaml:"projected"`
}

type k8sKeyToPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"` // a number or a port name
	} `yaml:"httpGet"`
}

type k8sContainer struct {
	Name    string      `yaml:"name"`
	Image   string      `yaml:"image"`
	Command []string    `yaml:"command"`
	Args    []string    `yaml:"args"`
	EnvFrom []any       `yaml:"envFrom"`
	Env     []k8sEnvVar `yaml:"env"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts    []k8sVolumeMount    `yaml:"volumeMounts"`
	SecurityContext *k8sSecurityContext `yaml:"securityContext"`
	ReadinessProbe  *k8sProbe           `yaml:"readinessProbe"`
	LivenessProbe   *k8sProbe           `yaml:"livenessProbe"`
	Resources       struct {
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
}

type k8sEnvVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef    *struct{ Name, Key string } `yaml:"secretKeyRef"`
		ConfigMapKeyRef *struct{ Name, Key string } `yaml:"configMapKeyRef"`
		FieldRef        *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type k8sVolumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

// loadK8s reads every object of the files kustomization.yaml lists, and checks it lists every
// manifest of the folder.
func loadK8s(t *testing.T) []k8sObject {
	t.Helper()
	dir := filepath.Join(deployDir, "k8s")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && !slices.Contains(kust.Resources, b) {
			t.Errorf("kustomization.yaml does not list %s", b)
		}
	}
	var objs []k8sObject
	for _, r := range kust.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			t.Fatalf("kustomization.yaml lists %s: %v", r, err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: an object without apiVersion, kind or name", r)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

func selects(sel k8sSelector, labels map[string]string) bool {
	if len(sel.MatchLabels) == 0 {
		return false // an empty selector would select every pod; none of ours means that
	}
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// The Kubernetes manifests run every component with replicas (cdc: one reader and a standby),
// probes on /healthz and /readyz where the binary serves them, resource requests and a
// PodDisruptionBudget each, settings the binary accepts with secrets from a Secret, and a
// NetworkPolicy that lets the sender reach only DNS, Kafka and public addresses on the ports
// its egress guard allows.
func TestKubernetesManifests(t *testing.T) {
	checkK8sObjects(t, loadK8s(t))
}

// checkK8sObjects holds a set of Kubernetes objects, the manifests of deploy/k8s or the Helm
// chart as rendered, to what TestKubernetesManifests describes. The ConfigMap is hookstream.
func checkK8sObjects(t *testing.T, objs []k8sObject) {
	t.Helper()
	config := map[string]string{}
	for _, o := range objs {
		if o.Kind == "ConfigMap" && o.Metadata.Name == "hookstream" {
			config = o.Data
		}
	}
	var pdbs, policies []k8sObject
	for _, o := range objs {
		switch o.Kind {
		case "PodDisruptionBudget":
			pdbs = append(pdbs, o)
		case "NetworkPolicy":
			policies = append(policies, o)
		}
	}
	image := ""
	byCommand := map[string]string{}
	var senderLabels map[string]string
	var senderSettings settings
	for _, o := range objs {
		if o.Kind != "Deployment" && o.Kind != "StatefulSet" && o.Kind != "Job" {
			continue
		}
		where := o.Kind + " " + o.Metadata.Name
		labels := o.Spec.Template.Metadata.Labels
		if o.Kind != "Job" && !selects(o.Spec.Selector, labels) {
			t.Errorf("%s: its selector %v does not select its pods %v", where, o.Spec.Selector.MatchLabels, labels)
		}
		if len(o.Spec.Template.Spec.Containers) != 1 {
			t.Errorf("%s: %d containers, want the one hookstream container", where, len(o.Spec.Template.Spec.Containers))
			continue
		}
		c := o.Spec.Template.Spec.Containers[0]
		name, _, _ := strings.Cut(c.Image, ":")
		if image == "" {
			image = name
		}
		if name != image || len(c.Command) > 0 || len(c.EnvFrom) > 0 {
			t.Errorf("%s: image %q, command %v, envFrom %v; want the image %s with its entrypoint, the command in args, each variable named in env", where, c.Image, c.Command, c.EnvFrom, image)
		}
		p := process{where: where, args: c.Args, env: map[string]string{}, refs: map[string]string{}, oneShot: o.Kind == "Job",
			probes: map[string]int{}}
		ports := map[string]int{}
		for _, cp := range c.Ports {
			ports[cp.Name] = cp.ContainerPort
			p.ports = append(p.ports, cp.ContainerPort)
		}
		for _, pr := range []*k8sProbe{c.ReadinessProbe, c.LivenessProbe} {
			if pr == nil || pr.HTTPGet == nil {
				continue
			}
			port, ok := ports[fmt.Sprint(pr.HTTPGet.Port)]
			if !ok {
				port, _ = pr.HTTPGet.Port.(int)
			}
			p.probes[pr.HTTPGet.Path] = port
		}
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			if !p.oneShot {
				t.Errorf("%s: no liveness probe on /healthz", where)
			}
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			if !p.oneShot {
				t.Errorf("%s: no readiness probe on /readyz", where)
			}
		}
		if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" {
			t.Errorf("%s: no cpu and memory requests", where)
		}
		for _, e := range c.Env {
			v, _ := variableOfEnv(e.Name)
			switch {
			case e.ValueFrom == nil:
				p.env[e.Name] = e.Value
			case e.ValueFrom.SecretKeyRef != nil:
				p.env[e.Name], p.refs[e.Name] = standIn(t, v.flag), "secret"
			case e.ValueFrom.ConfigMapKeyRef != nil:
				ref := e.ValueFrom.ConfigMapKeyRef
				val, ok := config[ref.Key]
				if ref.Name != "hookstream" || !ok {
					t.Errorf("%s: %s from ConfigMap %s key %s, which the manifests do not have", where, e.Name, ref.Name, ref.Key)
				}
				p.env[e.Name] = val
			case e.ValueFrom.FieldRef != nil:
				p.env[e.Name], p.refs[e.Name] = e.ValueFrom.FieldRef.FieldPath, "field"
			}
		}
		for _, e := range c.Env {
			if strings.HasSuffix(e.Name, "_FILE") && e.ValueFrom == nil {
				checkFileMounted(t, where, o.Spec.Template, c, e.Name, e.Value)
			}
		}
		s, ok := checkProcess(t, p)
		if !ok {
			continue
		}
		cmd := c.Args[0]
		if other, dup := byCommand[cmd]; dup {
			t.Errorf("%s and %s both run hookstream %s", other, where, cmd)
		}
		byCommand[cmd] = where
		if flagsOf(cmd).Lookup("instance-id") != nil && p.env["HOOKSTREAM_INSTANCE_ID"] != "metadata.name" {
			t.Errorf("%s: HOOKSTREAM_INSTANCE_ID is not the pod's name (fieldRef metadata.name); each replica needs its own", where)
		}
		if o.Kind == "Job" {
			continue
		}
		if o.Spec.Replicas == nil || *o.Spec.Replicas < 2 {
			t.Errorf("%s: replicas %s, want at least 2 (cdc: one reads the slot, one stands by)", where, replicasOf(o))
		}
		if o.Kind == "StatefulSet" && o.Spec.ServiceName == "" {
			t.Errorf("%s: a StatefulSet needs its serviceName", where)
		}
		covered := 0
		for _, pdb := range pdbs {
			if selects(pdb.Spec.Selector, labels) {
				covered++
				if pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
					t.Errorf("PodDisruptionBudget %s sets neither minAvailable nor maxUnavailable", pdb.Metadata.Name)
				}
			}
		}
		if covered != 1 {
			t.Errorf("%s: %d PodDisruptionBudgets select its pods, want 1", where, covered)
		}
		if cmd == "sender" {
			senderLabels, senderSettings = labels, s
		}
	}
	for _, cmd := range append(componentCommands(), "migrate", "topics") {
		if byCommand[cmd] == "" {
			t.Errorf("no manifest runs hookstream %s", cmd)
		}
	}
	if senderLabels == nil {
		t.Fatal("no sender workload")
	}
	checkSenderPolicy(t, policies, senderLabels, senderSettings, config["kafka-brokers"])
}

// checkSenderPolicy holds the NetworkPolicy of the sender to R28 and to the sender's own egress
// guard: DNS and the brokers by selector on their ports only; the internet by ipBlock, with
// every address the guard refuses (cluster ranges, metadata, loopback, ...) cut out and on
// exactly the ports the guard allows; no rule that opens every destination.
func checkSenderPolicy(t *testing.T, policies []k8sObject, senderLabels map[string]string, s settings, brokers string) {
	t.Helper()
	var pol *k8sObject
	for i, p := range policies {
		if selects(p.Spec.PodSelector, senderLabels) {
			if pol != nil {
				t.Errorf("NetworkPolicies %s and %s both select the sender", pol.Metadata.Name, p.Metadata.Name)
			}
			pol = &policies[i]
		}
	}
	if pol == nil {
		t.Fatal("no NetworkPolicy selects the sender's pods")
	}
	if !slices.Contains(pol.Spec.PolicyTypes, "Egress") {
		t.Fatalf("NetworkPolicy %s does not restrict egress", pol.Metadata.Name)
	}
	ecfg, err := s.egressConfig()
	if err != nil {
		t.Fatal(err)
	}
	guard, err := egress.New(ecfg)
	if err != nil {
		t.Fatal(err)
	}
	var brokerPorts []int
	for _, b := range commalist.Split(brokers) {
		brokerPorts = append(brokerPorts, portOf(t, "kafka-brokers", b))
	}

	// allowed reports whether the policy lets the sender connect to a:port.
	var internetPorts []int
	allowed := func(a netip.Addr, port int) bool {
		for _, r := range pol.Spec.Egress {
			if !slices.ContainsFunc(r.Ports, func(p struct {
				Protocol string `yaml:"protocol"`
				Port     int    `yaml:"port"`
			}) bool {
				return p.Port == port && p.Protocol == "TCP"
			}) {
				continue
			}
			for _, peer := range r.To {
				if peer.IPBlock == nil {
					continue
				}
				if netip.MustParsePrefix(peer.IPBlock.CIDR).Contains(a) && !slices.ContainsFunc(peer.IPBlock.Except, func(e string) bool {
					return netip.MustParsePrefix(e).Contains(a)
				}) {
					return true
				}
			}
		}
		return false
	}
	for i, r := range pol.Spec.Egress {
		if len(r.To) == 0 || len(r.Ports) == 0 {
			t.Errorf("egress rule %d of %s allows every destination or every port", i, pol.Metadata.Name)
			continue
		}
		for _, peer := range r.To {
			switch {
			case peer.IPBlock != nil:
				for _, p := range r.Ports {
					internetPorts = append(internetPorts, p.Port)
				}
			case peer.PodSelector == nil || peer.NamespaceSelector == nil || len(peer.PodSelector.MatchLabels) == 0:
				t.Errorf("egress rule %d of %s: a selector peer must name the namespace and the pods (DNS or the brokers)", i, pol.Metadata.Name)
			default:
				for _, p := range r.Ports {
					if p.Port != 53 && !slices.Contains(brokerPorts, p.Port) {
						t.Errorf("egress rule %d of %s opens port %d to pods; only DNS (53) and the brokers (%v) are in the cluster", i, pol.Metadata.Name, p.Port, brokerPorts)
					}
				}
			}
		}
	}
	// Ports: exactly those a webhook URL may name.
	ctx := context.Background()
	for port := 1; port <= 65535; port++ {
		guardAllows := guard.CheckURL(ctx, "https://8.8.8.8:"+strconv.Itoa(port)+"/") == nil
		if policyAllows := slices.Contains(internetPorts, port); guardAllows != policyAllows {
			t.Errorf("port %d: the sender's egress guard allows it: %v, the NetworkPolicy: %v", port, guardAllows, policyAllows)
		}
	}
	// Addresses: none the guard refuses (the cluster's private ranges, metadata, loopback, ...);
	// public ones reachable.
	port := internetPorts[0]
	for _, a := range []string{"10.0.0.1", "10.96.0.1", "10.244.1.7", "172.20.0.5", "192.168.1.1", "100.64.0.1",
		"169.254.169.254", "169.254.170.2", "127.0.0.1", "0.0.0.1", "224.0.0.251", "198.18.0.1", "192.0.2.1",
		"fd00:ec2::254", "fd12::1", "fe80::1", "::1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "ff02::1"} {
		addr := netip.MustParseAddr(a)
		if guard.CheckAddr(addr) == nil {
			t.Errorf("sample %s: the egress guard allows it; pick an address it refuses", a)
		}
		if allowed(addr, port) {
			t.Errorf("NetworkPolicy %s lets the sender reach %s (port %d), an address the egress guard refuses", pol.Metadata.Name, a, port)
		}
	}
	for _, a := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"} {
		if !allowed(netip.MustParseAddr(a), port) {
			t.Errorf("NetworkPolicy %s does not let the sender reach the public address %s", pol.Metadata.Name, a)
		}
	}
}

// The compose file loads as `docker compose config` loads it (compose-go, the parser of the
// docker compose CLI: the Compose schema, interpolation, merges), with the secrets given, and
// refuses to load without them, naming what to set.
func TestComposeFileLoads(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(deployDir, "compose"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	load := func(env ...string) (*types.Project, error) {
		opts, err := composecli.NewProjectOptions([]string{filepath.Join(dir, "compose.yaml")},
			composecli.WithWorkingDirectory(dir), composecli.WithEnv(env), composecli.WithName("hookstream"))
		if err != nil {
			t.Fatal(err)
		}
		return opts.LoadProject(context.Background())
	}
	p, err := load("POSTGRES_PASSWORD=pw", "HOOKSTREAM_SECRET_KEY="+key, "HOOKSTREAM_ADMIN_TOKEN=tok")
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	sender, err := p.GetService("sender-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := sender.Environment["HOOKSTREAM_SECRET_KEY"]; got == nil || *got != key {
		t.Errorf("sender-1 gets HOOKSTREAM_SECRET_KEY %v, want the one in the environment", got)
	}
	if _, ok := sender.Environment["HOOKSTREAM_DATABASE_URL"]; ok {
		t.Error("sender-1 has a database variable once loaded (R28)")
	}
	cdc, err := p.GetService("cdc-2")
	if err != nil {
		t.Fatal(err)
	}
	if got := cdc.Environment["HOOKSTREAM_DATABASE_URL"]; got == nil || !strings.Contains(*got, "hookstream:pw@postgres:5432") {
		t.Errorf("cdc-2 database URL %v, want the password interpolated", got)
	}
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "POSTGRES_PASSWORD") {
		t.Errorf("compose.yaml loads without its secrets (err %v); it must refuse, naming them", err)
	}
}

// compose.kafka-secure.yaml over compose.yaml, as `docker compose -f compose.yaml -f
// compose.kafka-secure.yaml` loads them: no bundled broker, a way out to the brokers, and every
// service that talks to Kafka does so over TLS with the CA and SASL as its component's own
// principal, whose password is a secret file of its own; the rest of compose.yaml's rules hold.
func TestComposeFileKafkaSecure(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(deployDir, "compose"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := secretbox.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	load := func(env ...string) (*types.Project, error) {
		opts, err := composecli.NewProjectOptions([]string{filepath.Join(dir, "compose.yaml"), filepath.Join(dir, "compose.kafka-secure.yaml")},
			composecli.WithWorkingDirectory(dir), composecli.WithEnv(env), composecli.WithName("hookstream"))
		if err != nil {
			t.Fatal(err)
		}
		return opts.LoadProject(context.Background())
	}
	env := []string{"POSTGRES_PASSWORD=pw", "HOOKSTREAM_SECRET_KEY=" + key, "HOOKSTREAM_ADMIN_TOKEN=tok"}
	if _, err := load(env...); err == nil || !strings.Contains(err.Error(), "HOOKSTREAM_KAFKA_BROKERS") {
		t.Errorf("the secured overlay loads without HOOKSTREAM_KAFKA_BROKERS (err %v); it must refuse, naming it", err)
	}
	const brokers = "b-1.kafka.example.com:9096,b-2.kafka.example.com:9096"
	p, err := load(append(env, "HOOKSTREAM_KAFKA_BROKERS="+brokers)...)
	if err != nil {
		t.Fatalf("compose.yaml with compose.kafka-secure.yaml does not load: %v", err)
	}
	if _, ok := p.Services["kafka"]; ok {
		t.Error("the bundled broker still starts beside the secured Kafka")
	}
	if n, ok := p.Networks["kafka"]; !ok || bool(n.Internal) {
		t.Errorf("network kafka %+v: the brokers outside the host are unreachable from an internal network", n)
	}
	principals := map[string]string{} // command → the source of its password secret
	for name, svc := range p.Services {
		if svc.Environment["HOOKSTREAM_KAFKA_BROKERS"] == nil {
			continue
		}
		val := func(k string) string {
			if v := svc.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		cmd := svc.Command[0]
		if val("HOOKSTREAM_KAFKA_BROKERS") != brokers || val("HOOKSTREAM_KAFKA_TLS") != "true" || val("HOOKSTREAM_KAFKA_SASL_MECHANISM") == "" {
			t.Errorf("service %s: brokers %q, TLS %q, SASL %q; want the secured brokers over TLS with SASL", name,
				val("HOOKSTREAM_KAFKA_BROKERS"), val("HOOKSTREAM_KAFKA_TLS"), val("HOOKSTREAM_KAFKA_SASL_MECHANISM"))
		}
		principal := "hookstream-" + cmd
		if cmd == "topics" {
			principal = "hookstream-setup" // the setup principal of docs/operations.md's ACL table
		}
		if u := val("HOOKSTREAM_KAFKA_SASL_USERNAME"); u != principal {
			t.Errorf("service %s: SASL user %q, want %s (each component its own principal)", name, u, principal)
		}
		files := map[string]string{} // file in the container → the project's secret
		for _, sec := range svc.Secrets {
			files["/run/secrets/"+sec.Target] = sec.Source
		}
		ca, pw := files[val("HOOKSTREAM_KAFKA_TLS_CA_FILE")], files[val("HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE")]
		if ca == "" || pw == "" {
			t.Errorf("service %s: the CA file %q and the password file %q are not both secrets of the service (%v)", name,
				val("HOOKSTREAM_KAFKA_TLS_CA_FILE"), val("HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE"), files)
			continue
		}
		if other, ok := principals[cmd]; ok && other != pw {
			t.Errorf("service %s: two replicas of %s read different passwords (%s, %s)", name, cmd, other, pw)
		}
		principals[cmd] = pw
		if file := p.Secrets[pw].File; filepath.Base(file) != principal+".password" {
			t.Errorf("service %s: its password comes from %q, want the file of %s", name, file, principal)
		}
		if cmd == "sender" && (svc.Environment["HOOKSTREAM_DATABASE_URL"] != nil || svc.Networks["data"] != nil) {
			t.Errorf("service %s: the sender reaches the database (R28)", name)
		}
		pr := process{where: "secured compose service " + name, args: svc.Command, env: map[string]string{}, refs: map[string]string{},
			oneShot: svc.Restart == "no"}
		for k := range svc.Environment {
			pr.env[k] = val(k)
			pr.refs[k] = "interpolated"
		}
		checkProcess(t, pr)
	}
	seen := map[string]string{}
	for cmd, src := range principals {
		if other, dup := seen[src]; dup {
			t.Errorf("%s and %s read the same password secret %s", other, cmd, src)
		}
		seen[src] = cmd
	}
	if want := len(componentCommands()) + 1; len(principals) != want {
		t.Errorf("%d commands talk to Kafka as their own principal (%v), want %d: every component and topics", len(principals), principals, want)
	}
}
