{{/* The chart's name, or nameOverride. */}}
{{- define "hookstream.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' base name: fullnameOverride, else the release name when it holds the chart's
name, else release-chart. */}}
{{- define "hookstream.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries; dict: root, component. */}}
{{- define "hookstream.labels" -}}
{{ include "hookstream.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
app.kubernetes.io/version: {{ .root.Values.image.tag | default .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: hookstream
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The labels a selector matches; dict: root, component. */}}
{{- define "hookstream.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hookstream.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "hookstream.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Whether the pods mount Kafka credentials: a CA, a password, a token or a client certificate. */}}
{{- define "hookstream.kafkaMounts" -}}
{{- $k := .Values.kafka -}}
{{- if or (and $k.tls.enabled $k.tls.caSecret.name) $k.sasl.mechanism (and $k.tls.enabled $k.tls.clientCert) -}}true{{- end -}}
{{- end -}}

{{/* The Kafka settings of one principal's container; dict: root, principal (a key of
kafka.principals). Sets only what the settings need: the binary refuses credentials without a
mechanism. */}}
{{- define "hookstream.kafkaEnv" -}}
{{- $k := .root.Values.kafka -}}
{{- $p := index $k.principals .principal -}}
- name: HOOKSTREAM_KAFKA_BROKERS
  valueFrom:
    configMapKeyRef: {name: {{ include "hookstream.fullname" .root }}, key: kafka-brokers}
- name: HOOKSTREAM_TOPIC_PREFIX
  valueFrom:
    configMapKeyRef: {name: {{ include "hookstream.fullname" .root }}, key: topic-prefix}
{{- if $k.tls.enabled }}
- name: HOOKSTREAM_KAFKA_TLS
  value: "true"
{{- if $k.tls.caSecret.name }}
- name: HOOKSTREAM_KAFKA_TLS_CA_FILE
  value: /var/run/secrets/hookstream/kafka/ca.crt
{{- end }}
{{- if $k.tls.serverName }}
- name: HOOKSTREAM_KAFKA_TLS_SERVER_NAME
  value: {{ $k.tls.serverName | quote }}
{{- end }}
{{- if $k.tls.clientCert }}
- name: HOOKSTREAM_KAFKA_TLS_CERT_FILE
  value: /var/run/secrets/hookstream/kafka/tls.crt
- name: HOOKSTREAM_KAFKA_TLS_KEY_FILE
  value: /var/run/secrets/hookstream/kafka/tls.key
{{- end }}
{{- end }}
{{- with $k.sasl.mechanism }}
{{- if not (has . (list "PLAIN" "SCRAM-SHA-256" "SCRAM-SHA-512" "OAUTHBEARER")) }}
{{- fail (printf "kafka.sasl.mechanism %q: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or empty" .) }}
{{- end }}
- name: HOOKSTREAM_KAFKA_SASL_MECHANISM
  value: {{ . | quote }}
- name: HOOKSTREAM_KAFKA_SASL_USERNAME
  value: {{ required (printf "kafka.principals.%s.username" $.principal) $p.username | quote }}
{{- if eq . "OAUTHBEARER" }}
- name: HOOKSTREAM_KAFKA_SASL_OAUTH_TOKEN_FILE
  value: /var/run/secrets/hookstream/kafka/token
{{- else }}
- name: HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE
  value: /var/run/secrets/hookstream/kafka/password
{{- end }}
{{- end }}
{{- end -}}

{{/* The volume of one principal's Kafka credentials; dict: root, principal. */}}
{{- define "hookstream.kafkaVolume" -}}
{{- $k := .root.Values.kafka -}}
{{- $p := index $k.principals .principal -}}
{{- if include "hookstream.kafkaMounts" .root }}
- name: kafka
  projected:
    defaultMode: 0440
    sources:
      {{- if and $k.tls.enabled $k.tls.caSecret.name }}
      - secret:
          name: {{ $k.tls.caSecret.name }}
          items: [{key: {{ $k.tls.caSecret.key }}, path: ca.crt}]
      {{- end }}
      {{- if or $k.sasl.mechanism (and $k.tls.enabled $k.tls.clientCert) }}
      - secret:
          name: {{ required (printf "kafka.principals.%s.secretName" .principal) $p.secretName }}
          items:
            {{- if eq $k.sasl.mechanism "OAUTHBEARER" }}
            - {key: {{ $k.sasl.oauthTokenKey }}, path: token}
            {{- else if $k.sasl.mechanism }}
            - {key: {{ $k.sasl.passwordKey }}, path: password}
            {{- end }}
            {{- if and $k.tls.enabled $k.tls.clientCert }}
            - {key: {{ $k.tls.certKey }}, path: tls.crt}
            - {key: {{ $k.tls.keyKey }}, path: tls.key}
            {{- end }}
      {{- end }}
{{- end }}
{{- end -}}

{{- define "hookstream.kafkaVolumeMount" -}}
{{- if include "hookstream.kafkaMounts" . }}
- name: kafka
  mountPath: /var/run/secrets/hookstream/kafka
  readOnly: true
{{- end }}
{{- end -}}

{{/* Variables given as name: value maps, in order. */}}
{{- define "hookstream.extraEnv" -}}
{{- range $name, $value := . }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{/* A Secret key reference as an env entry; list: variable, secret name, key. */}}
{{- define "hookstream.secretEnv" -}}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef: {name: {{ index . 1 }}, key: {{ index . 2 }}}
{{- end -}}
