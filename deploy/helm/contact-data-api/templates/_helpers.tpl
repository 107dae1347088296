{{- define "cda.name" -}}{{ .Chart.Name }}{{- end -}}
{{- define "cda.fullname" -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" }}{{- end -}}

{{- define "cda.labels" -}}
app.kubernetes.io/name: {{ include "cda.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "cda.selector" -}}
app.kubernetes.io/name: {{ include "cda.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "cda.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}{{ default (include "cda.fullname" .) .Values.serviceAccount.name }}{{ else }}{{ default "default" .Values.serviceAccount.name }}{{ end -}}
{{- end -}}

{{/* Environment shared by API, worker and migration job: settings from the ConfigMap, secrets from the Secret. */}}
{{- define "cda.env" -}}
env:
{{- range $key, $value := (include "cda.config" . | fromYaml) }}
  - { name: {{ $key }}, value: {{ $value | toString | quote }} }
{{- end }}
{{- range $key := list "DATABASE_URL" "SERVER_SECRET" "ENCRYPTION_KEY" "S3_ACCESS_KEY" "S3_SECRET_KEY" }}
  - name: {{ $key }}
    valueFrom:
      secretKeyRef: { name: {{ $.Values.existingSecret }}, key: {{ $key }} }
{{- end }}
{{- range $key := list "ENCRYPTION_PREVIOUS_KEYS" "TEMPORAL_API_KEY" "METRICS_TOKEN" "OTEL_EXPORTER_OTLP_HEADERS" }}
  - name: {{ $key }}
    valueFrom:
      secretKeyRef: { name: {{ $.Values.existingSecret }}, key: {{ $key }}, optional: true }
{{- end }}
{{- end -}}

{{/* TLS material (Temporal client certificates and CA, PostgreSQL CA) and a writable /tmp. */}}
{{- define "cda.volumeMounts" -}}
volumeMounts:
  - { name: tmp, mountPath: /tmp }
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
  - { name: temporal-tls, mountPath: /etc/temporal-tls, readOnly: true }
{{- end }}
{{- if .Values.postgres.caSecret }}
  - { name: postgres-ca, mountPath: /etc/postgres-ca, readOnly: true }
{{- end }}
{{- end -}}

{{- define "cda.volumes" -}}
volumes:
  - name: tmp
    emptyDir: { sizeLimit: 256Mi }
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.secretName }}
  - name: temporal-tls
    secret: { secretName: {{ .Values.temporal.tls.secretName }} }
{{- end }}
{{- if .Values.postgres.caSecret }}
  - name: postgres-ca
    secret: { secretName: {{ .Values.postgres.caSecret }} }
{{- end }}
{{- end -}}

{{- define "cda.podSpecCommon" -}}
serviceAccountName: {{ include "cda.serviceAccountName" . }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Settings (not secrets) of every process, as a map; rendered into each pod's env (no ConfigMap:
     the migration hook runs before any release resource exists). */}}
{{- define "cda.config" -}}
NODE_ENV: production
HOST: 0.0.0.0
PORT: {{ .Values.api.port | quote }}
WORKER_HEALTH_PORT: {{ .Values.worker.healthPort | quote }}
METRICS_PORT: {{ .Values.metrics.port | quote }}
PUBLIC_BASE_URL: {{ required "publicBaseUrl is required" .Values.publicBaseUrl | quote }}
SHUTDOWN_DELAY_MS: {{ mul .Values.api.shutdownDelaySeconds 1000 | quote }}
API_DB_POOL_MAX: {{ .Values.postgres.apiPoolMax | quote }}
WORKER_DB_POOL_MAX: {{ .Values.postgres.workerPoolMax | quote }}
{{- if .Values.postgres.caSecret }}
PGSSLROOTCERT: /etc/postgres-ca/ca.crt
{{- end }}
TEMPORAL_ADDRESS: {{ .Values.temporal.address | quote }}
TEMPORAL_NAMESPACE: {{ .Values.temporal.namespace | quote }}
TEMPORAL_TASK_QUEUE: {{ .Values.temporal.taskQueue | quote }}
{{- if .Values.temporal.tls.enabled }}
TEMPORAL_TLS: "true"
{{- with .Values.temporal.tls.serverName }}
TEMPORAL_TLS_SERVER_NAME: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.tls.secretName }}
{{- if .Values.temporal.tls.serverCA }}
TEMPORAL_TLS_CA_FILE: /etc/temporal-tls/ca.crt
{{- end }}
{{- if .Values.temporal.tls.clientCert }}
TEMPORAL_TLS_CERT_FILE: /etc/temporal-tls/tls.crt
TEMPORAL_TLS_KEY_FILE: /etc/temporal-tls/tls.key
{{- end }}
{{- end }}
{{- end }}
S3_ENDPOINT: {{ .Values.s3.endpoint | quote }}
S3_PUBLIC_ENDPOINT: {{ default .Values.s3.endpoint .Values.s3.publicEndpoint | quote }}
S3_BUCKET: {{ .Values.s3.bucket | quote }}
S3_REGION: {{ .Values.s3.region | quote }}
S3_PATH_STYLE: {{ .Values.s3.pathStyle | quote }}
DISCOVERY_ENGINE: {{ .Values.discovery.engine | quote }}
{{- if eq .Values.discovery.engine "opensearch" }}
OPENSEARCH_URL: {{ required "discovery.opensearch.url is required with discovery.engine=opensearch" .Values.discovery.opensearch.url | quote }}
OPENSEARCH_INDEX_PREFIX: {{ .Values.discovery.opensearch.indexPrefix | quote }}
OPENSEARCH_SHARDS: {{ .Values.discovery.opensearch.shards | quote }}
OPENSEARCH_REPLICAS: {{ .Values.discovery.opensearch.replicas | quote }}
{{- end }}
{{- with .Values.tracing.otlpEndpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
OTEL_TRACES_SAMPLER: {{ $.Values.tracing.sampler | quote }}
OTEL_TRACES_SAMPLER_ARG: {{ $.Values.tracing.samplerArg | quote }}
{{- end }}
{{- range $k, $v := .Values.extraEnv }}
{{ $k }}: {{ $v | quote }}
{{- end }}
{{- end -}}
