{{/* The release's name for every object: the release name, unless it lacks the chart name. */}}
{{- define "vmgate.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vmgate.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret holding the serving pair in every mode. */}}
{{- define "vmgate.tlsSecret" -}}
{{- if eq .Values.certs.mode "external" -}}
{{- .Values.certs.external.existingSecret -}}
{{- else -}}
{{- printf "%s-tls" (include "vmgate.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "vmgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vmgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vmgate.labels" -}}
{{ include "vmgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: vmgate
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The image reference: registry/repository:tag, the tag defaulting to the app version. */}}
{{- define "vmgate.image" -}}
{{- $registry := .Values.image.registry -}}
{{- $ref := .Values.image.repository -}}
{{- if $registry }}{{ $ref = printf "%s/%s" $registry $ref }}{{ end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $ref .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The namespaces no webhook sees: the configured ones and, always, the release's own. */}}
{{- define "vmgate.excludedNamespaces" -}}
{{- $list := list -}}
{{- range .Values.webhook.excludedNamespaces }}{{ $list = append $list . }}{{ end -}}
{{- $list = append $list .Release.Namespace -}}
{{- toJson (uniq $list) -}}
{{- end -}}

{{/* The CA bundle of external mode as the API wants it (base64 of PEM), from PEM or base64. */}}
{{- define "vmgate.externalCABundle" -}}
{{- $bundle := trim .Values.certs.external.caBundle -}}
{{- if hasPrefix "-----BEGIN" $bundle -}}
{{- $bundle = b64enc (printf "%s\n" $bundle) -}}
{{- end -}}
{{- if not (contains "-----BEGIN CERTIFICATE-----" (b64dec $bundle)) -}}
{{- fail "certs.external.caBundle: neither a PEM certificate nor the base64 of one" -}}
{{- end -}}
{{- $bundle -}}
{{- end -}}

{{/* The arguments `vmgate certs` takes in selfSigned mode (the init container and the sidecar). */}}
{{- define "vmgate.certsArgs" -}}
- certs
- --namespace={{ .Release.Namespace }}
- --service={{ include "vmgate.fullname" . }}
- --secret={{ include "vmgate.tlsSecret" . }}
- --mutating-webhook-configuration={{ include "vmgate.fullname" . }}
- --validating-webhook-configuration={{ include "vmgate.fullname" . }}
- --cluster-domain={{ .Values.clusterDomain }}
- --ca-duration={{ .Values.certs.selfSigned.caDuration }}
- --cert-duration={{ .Values.certs.selfSigned.certDuration }}
- --renew-before={{ .Values.certs.selfSigned.renewBefore }}
- --write-dir=/run/vmgate/tls
{{- end -}}

{{/* The restricted container securityContext every container of the pod runs with. */}}
{{- define "vmgate.containerSecurityContext" -}}
{{ toYaml .Values.securityContext }}
{{- end -}}

{{/* The launcher image (launcher pods, and vmgate-node's DaemonSet, which runs from it). */}}
{{- define "vmgate.launcherImage" -}}
{{- $image := .Values.launcher.image -}}
{{- $ref := $image.repository -}}
{{- if $image.registry }}{{ $ref = printf "%s/%s" $image.registry $ref }}{{ end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $ref $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref ($image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The controller's, the node agent's and the subresource API's identities are KubeVirt's
(kubevirt-controller, kubevirt-handler, kubevirt-apiserver), which vmgate serve trusts in
serve.kubevirtNamespace only: they must live there. */}}
{{- define "vmgate.requireKubevirtNamespace" -}}
{{- if ne .Release.Namespace .Values.serve.kubevirtNamespace -}}
{{- fail (printf "controller.enabled, node.enabled, subresources.enabled: vmgate controller, vmgate-node and vmgate subresources act as KubeVirt's kubevirt-controller, kubevirt-handler and kubevirt-apiserver, which the webhook trusts in serve.kubevirtNamespace (%s) only: install the release there (helm install -n %s) or set serve.kubevirtNamespace=%s" .Values.serve.kubevirtNamespace .Values.serve.kubevirtNamespace .Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{- define "vmgate.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "vmgate.name" . }}-controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vmgate.nodeSelectorLabels" -}}
app.kubernetes.io/name: {{ include "vmgate.name" . }}-node
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vmgate.subresourcesSelectorLabels" -}}
app.kubernetes.io/name: {{ include "vmgate.name" . }}-subresources
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The Secret with the node agents' side of the node link (ca.crt, tls.crt, tls.key):
node.subresources.secretName, else <fullname>-node-link. The chart fills it when
subresources.enabled (templates/subresources.yaml); vmgate-node mounts it by this name. */}}
{{- define "vmgate.nodeLinkSecret" -}}
{{- dig "subresources" "secretName" "" .Values.node | default (printf "%s-node-link" (include "vmgate.fullname" .)) -}}
{{- end -}}
