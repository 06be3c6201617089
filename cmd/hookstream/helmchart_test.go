package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The Helm chart (deploy/helm/hookstream) is rendered with the pinned helm of
// deploy/helm/check.sh (built into the data directory on first use) and held to the same rules
// as deploy/k8s (checkK8sObjects: commands, variables, probes, PodDisruptionBudgets, the
// sender's NetworkPolicy); the pods of both, and the image, run as a numeric non-root user.

// renderChart renders the chart with its defaults and with values-secure-kafka.yaml, as
// `check.sh render` does, and returns the objects of each, by values file.
func renderChart(t *testing.T) map[string][]k8sObject {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(deployDir, "helm", "check.sh"), "render", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("deploy/helm/check.sh render: %v\n%s", err, out.Bytes())
	}
	rendered := map[string][]k8sObject{}
	for _, name := range []string{"default", "secure-kafka"} {
		path := filepath.Join(dir, name+".yaml")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rendered[name] = decodeK8s(t, name+".yaml", raw)
	}
	return rendered
}

// decodeK8s reads the objects of a multi-document YAML stream, leaving out empty documents
// (helm writes one for a template that renders nothing).
func decodeK8s(t *testing.T, name string, raw []byte) []k8sObject {
	t.Helper()
	var objs []k8sObject
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
			continue
		}
		var o k8sObject
		if err := node.Decode(&o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Errorf("%s: an object without apiVersion, kind or name", name)
		}
		objs = append(objs, o)
	}
}

// k8sEnv is a container's variable: its literal value, or "" with ok false when it comes from
// elsewhere or is not set.
func k8sEnv(c k8sContainer, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, e.ValueFrom == nil
		}
	}
	return "", false
}

// checkFileMounted fails t unless the file path, named by the variable of container c, is a
// file of a Secret volume mounted into c: a path no volume provides would make the component
// refuse to start on a real cluster.
func checkFileMounted(t *testing.T, where string, pod k8sPodTemplate, c k8sContainer, variable, path string) {
	t.Helper()
	dir, base := filepath.Dir(path), filepath.Base(path)
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name != m.Name {
				continue
			}
			if secretVolumeHas(v, base) {
				return
			}
			t.Errorf("%s: %s=%s, but volume %s mounted at %s provides no file %s", where, variable, path, v.Name, dir, base)
			return
		}
		t.Errorf("%s: mounts %s, which is no volume of the pod", where, m.Name)
		return
	}
	t.Errorf("%s: %s=%s, but nothing is mounted at %s", where, variable, path, dir)
}

// secretVolumeHas reports whether the Secret volume v has a file named file: an item with that
// path, or, for a Secret without items, possibly any key.
func secretVolumeHas(v k8sVolume, file string) bool {
	switch {
	case v.Secret != nil:
		return len(v.Secret.Items) == 0 || slices.ContainsFunc(v.Secret.Items, func(i k8sKeyToPath) bool { return i.Path == file })
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			if src.Secret != nil && slices.ContainsFunc(src.Secret.Items, func(i k8sKeyToPath) bool { return i.Path == file }) {
				return true
			}
		}
	}
	return false
}

// The chart, as rendered with its defaults and with the secured-Kafka example, passes every
// check of the manifests (TestKubernetesManifests), carries the labels Kubernetes tools expect,
// holds no Secret, and with SASL gives each workload its own principal and its own Secret,
// beside the one shared CA.
func TestHelmChart(t *testing.T) {
	for name, objs := range renderChart(t) {
		t.Run(name, func(t *testing.T) {
			checkK8sObjects(t, objs)
			for _, o := range objs {
				where := o.Kind + " " + o.Metadata.Name
				if o.Kind == "Secret" {
					t.Errorf("%s: the chart makes a Secret; it must only name the Secrets you create", where)
				}
				for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
					"app.kubernetes.io/managed-by", "app.kubernetes.io/component", "helm.sh/chart"} {
					if o.Metadata.Labels[l] == "" {
						t.Errorf("%s: no label %s", where, l)
					}
				}
			}
			if name == "secure-kafka" {
				checkPrincipals(t, objs)
			}
		})
	}
}

// checkPrincipals: every workload that talks to Kafka does so over TLS with the shared CA and
// SASL as a user of its own, whose password comes from a Secret no other workload mounts.
func checkPrincipals(t *testing.T, objs []k8sObject) {
	t.Helper()
	users := map[string]string{}   // SASL user → workload
	secrets := map[string]string{} // the workload's own Secret → workload
	ca := ""
	kafkaWorkloads := 0
	for _, o := range objs {
		if len(o.Spec.Template.Spec.Containers) == 0 {
			continue
		}
		where := o.Kind + " " + o.Metadata.Name
		c := o.Spec.Template.Spec.Containers[0]
		if !slices.ContainsFunc(c.Env, func(e k8sEnvVar) bool { return e.Name == "HOOKSTREAM_KAFKA_BROKERS" }) {
			continue
		}
		kafkaWorkloads++
		if v, _ := k8sEnv(c, "HOOKSTREAM_KAFKA_TLS"); v != "true" {
			t.Errorf("%s: HOOKSTREAM_KAFKA_TLS %q, want true", where, v)
		}
		mech, _ := k8sEnv(c, "HOOKSTREAM_KAFKA_SASL_MECHANISM")
		user, _ := k8sEnv(c, "HOOKSTREAM_KAFKA_SASL_USERNAME")
		pwFile, _ := k8sEnv(c, "HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE")
		caFile, _ := k8sEnv(c, "HOOKSTREAM_KAFKA_TLS_CA_FILE")
		if mech == "" || user == "" || pwFile == "" || caFile == "" {
			t.Errorf("%s: SASL mechanism %q, user %q, password file %q, CA file %q: want all four", where, mech, user, pwFile, caFile)
			continue
		}
		if other, dup := users[user]; dup {
			t.Errorf("%s and %s both authenticate as %s; each component is its own principal", other, where, user)
		}
		users[user] = where
		if _, set := k8sEnv(c, "HOOKSTREAM_KAFKA_SASL_PASSWORD"); set {
			t.Errorf("%s: the password is written into the manifest; it comes from a mounted Secret", where)
		}
		for _, v := range o.Spec.Template.Spec.Volumes {
			if v.Projected == nil || !slices.Contains(c.VolumeMounts, k8sVolumeMount{Name: v.Name, MountPath: filepath.Dir(pwFile)}) {
				continue
			}
			for _, src := range v.Projected.Sources {
				if src.Secret == nil {
					continue
				}
				for _, it := range src.Secret.Items {
					switch it.Path {
					case "ca.crt":
						if ca != "" && ca != src.Secret.Name {
							t.Errorf("%s: the CA from Secret %s, another workload's from %s; one CA is shared", where, src.Secret.Name, ca)
						}
						ca = src.Secret.Name
					case filepath.Base(pwFile):
						if other, dup := secrets[src.Secret.Name]; dup {
							t.Errorf("%s and %s both mount the password of Secret %s; each component has its own", other, where, src.Secret.Name)
						}
						secrets[src.Secret.Name] = where
					}
				}
			}
		}
	}
	// cdc, fanout, sender, retry, recorder, admin and the topics Job.
	if kafkaWorkloads != len(componentCommands())+1 || len(secrets) != kafkaWorkloads {
		t.Errorf("%d workloads talk to Kafka with %d Secrets of their own (%v); want %d, one each", kafkaWorkloads, len(secrets), secrets, len(componentCommands())+1)
	}
}

// The image's user is numeric and not root, and every pod of deploy/k8s and of the chart (with
// either values file) says which user it runs as: the kubelet refuses runAsNonRoot for an image
// whose user is a name ("image has non-numeric user, cannot verify user is non-root"), and
// runAsUser lets it check without the image. A pod that mounts Secrets sets fsGroup, so the
// non-root user can read them.
func TestPodSecurity(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	users := regexp.MustCompile(`(?m)^USER (.*)$`).FindAllStringSubmatch(string(raw), -1)
	if len(users) == 0 {
		t.Fatal("Dockerfile: no USER; the image would run as root")
	}
	last := strings.TrimSpace(users[len(users)-1][1])
	m := regexp.MustCompile(`^(\d+):(\d+)$`).FindStringSubmatch(last)
	if m == nil {
		t.Errorf("Dockerfile: USER %s; want a numeric uid:gid such as 65532:65532 (the kubelet cannot check runAsNonRoot for a name)", last)
	} else if uid, _ := strconv.Atoi(m[1]); uid == 0 {
		t.Error("Dockerfile: USER is root")
	}

	sets := map[string][]k8sObject{"deploy/k8s": loadK8s(t)}
	for name, objs := range renderChart(t) {
		sets["chart with "+name+" values"] = objs
	}
	for set, objs := range sets {
		pods := 0
		for _, o := range objs {
			if o.Kind != "Deployment" && o.Kind != "StatefulSet" && o.Kind != "Job" && o.Kind != "DaemonSet" {
				continue
			}
			pods++
			checkPodSecurity(t, fmt.Sprintf("%s: %s %s", set, o.Kind, o.Metadata.Name), o.Spec.Template)
		}
		if pods == 0 {
			t.Errorf("%s: no pod templates", set)
		}
	}
}

// checkPodSecurity fails t unless the pod runs as a numeric non-root user, set on the pod or on
// every container, and sets fsGroup when it mounts volumes.
func checkPodSecurity(t *testing.T, where string, pod k8sPodTemplate) {
	t.Helper()
	podSC := pod.Spec.SecurityContext
	if podSC == nil {
		podSC = &k8sSecurityContext{}
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &k8sSecurityContext{}
		}
		user, nonRoot := podSC.RunAsUser, podSC.RunAsNonRoot
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		switch {
		case user == nil:
			t.Errorf("%s, container %s: no runAsUser on the pod or the container; the kubelet refuses runAsNonRoot for an image user it cannot read as a number", where, c.Name)
		case *user == 0:
			t.Errorf("%s, container %s: runAsUser 0 (root)", where, c.Name)
		}
		if nonRoot == nil || !*nonRoot {
			t.Errorf("%s, container %s: runAsNonRoot is not true", where, c.Name)
		}
	}
	if len(pod.Spec.Volumes) > 0 && podSC.FSGroup == nil {
		t.Errorf("%s: mounts volumes without fsGroup; its files may not be readable by the non-root user", where)
	}
}
