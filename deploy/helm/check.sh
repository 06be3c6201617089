#!/usr/bin/env bash
# Checks of the deployables (make test-deploy): the Helm chart and the Kubernetes manifests,
# offline, with tools installed on first use.
#
#   deploy/helm/check.sh          # helm lint, helm template (defaults and values-secure-kafka.yaml),
#                                 # schema validation of the rendered chart and of deploy/k8s, and the
#                                 # Go tests that hold them to the binary (TestHelmChart, TestPodSecurity)
#   deploy/helm/check.sh render DIR   # render the chart into DIR/default.yaml and DIR/secure-kafka.yaml
#   deploy/helm/check.sh helm ARGS    # run the pinned helm
#
# Tools, under <data dir>/tools (HOOKSTREAM_DATA_DIR, default <repo>/.data), each installed only
# when missing:
#   helm                 built from the Go module proxy (go install helm.sh/helm/v4/cmd/helm@HELM_VERSION)
#   kubernetes-validate  from PyPI into a venv; it bundles the Kubernetes JSON schemas, so the
#                        validation needs no network and no cluster
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
data_root=${HOOKSTREAM_DATA_DIR:-$repo/.data}
tools=$data_root/tools
chart=$here/hookstream

HELM_VERSION=v4.3.2
KUBERNETES_VALIDATE_VERSION=1.37.0
# The Kubernetes versions the output is validated against: the oldest the chart's kubeVersion
# is checked on and the newest the schemas know.
KUBE_VERSIONS=(1.30.0 1.37.0)

helm_bin=$tools/helm-$HELM_VERSION/helm
kv_venv=$tools/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION
kv_bin=$kv_venv/bin/kubernetes-validate

say() { printf 'check.sh: %s\n' "$*" >&2; }

install_helm() {
	[ -x "$helm_bin" ] && return
	command -v "${GO:-go}" >/dev/null || { say "no go to build helm with"; return 1; }
	say "building helm $HELM_VERSION from the Go module proxy into $(dirname "$helm_bin") (once; a few minutes)"
	mkdir -p "$(dirname "$helm_bin")"
	# Outside any module (a pinned version, with its own go.sum); go install writes the binary
	# only once it is linked.
	(cd "$(dirname "$helm_bin")" && GOFLAGS= GOBIN="$(dirname "$helm_bin")" "${GO:-go}" install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION")
}

install_kubernetes_validate() {
	# The marker is written last: a venv without it is an interrupted install, made again.
	[ -f "$kv_venv/.installed" ] && return
	say "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION from PyPI into $kv_venv (once)"
	rm -rf "$kv_venv"
	python3 -m venv "$kv_venv"
	"$kv_venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
	"$kv_bin" --version >/dev/null
	touch "$kv_venv/.installed"
}

# render DIR: the chart with its defaults and with the secured-Kafka example, as installed in
# the namespace hookstream under the release name hookstream.
render() {
	local out=$1
	mkdir -p "$out"
	"$helm_bin" template hookstream "$chart" --namespace hookstream >"$out/default.yaml"
	"$helm_bin" template hookstream "$chart" --namespace hookstream \
		-f "$chart/values-secure-kafka.yaml" >"$out/secure-kafka.yaml"
}

# The manifests kustomization.yaml lists (kustomization.yaml itself is no Kubernetes object).
k8s_manifests() {
	sed -n 's/^  - \([a-z-]*\.yaml\)$/\1/p' "$repo/deploy/k8s/kustomization.yaml" | sed "s|^|$repo/deploy/k8s/|"
}

case "${1:-check}" in
check)
	install_helm
	install_kubernetes_validate
	out=$data_root/test-deploy
	rm -rf "$out"
	"$helm_bin" lint --strict "$chart"
	"$helm_bin" lint --strict "$chart" -f "$chart/values-secure-kafka.yaml"
	render "$out"
	mapfile -t manifests < <(k8s_manifests)
	for v in "${KUBE_VERSIONS[@]}"; do
		say "validating the rendered chart and deploy/k8s against the schemas of Kubernetes $v"
		"$kv_bin" --strict --quiet -k "$v" "$out/default.yaml" "$out/secure-kafka.yaml" "${manifests[@]}"
	done
	(cd "$repo" && "${GO:-go}" test -count=1 -run '^(TestHelmChart|TestPodSecurity|TestKubernetesManifests|TestDockerfile)$' ./cmd/hookstream/)
	;;
render)
	[ $# -eq 2 ] || { echo "usage: $0 render DIR" >&2; exit 2; }
	install_helm
	render "$2"
	;;
helm)
	shift
	install_helm
	exec "$helm_bin" "$@"
	;;
*)
	echo "usage: $0 [check] | render DIR | helm ARGS" >&2
	exit 2
	;;
esac
