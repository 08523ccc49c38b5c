package main

// One admission request through KubeVirt's webhooks as virt-api wires them
// (pkg/virt-api/api.go, pkg/virt-api/webhooks/{mutating,validating}-webhook): the mutating
// webhook, its JSON patch applied as the apiserver applies it, then the validating webhook on
// the admitted object; for an admitted VirtualMachine, the VirtualMachineInstance the VM
// controller would create from it (pkg/virt-controller/watch/vm startVMI), through the VMI
// mutating webhook.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	jsonpatch "github.com/evanphx/json-patch"
	"github.com/google/uuid"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfield "k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"

	v1 "kubevirt.io/api/core/v1"

	instancetypecontroller "kubevirt.io/kubevirt/pkg/instancetype/controller/vm"
	netadmitter "kubevirt.io/kubevirt/pkg/network/admitter"
	netvmispec "kubevirt.io/kubevirt/pkg/network/vmispec"
	"kubevirt.io/kubevirt/pkg/storage/cbt"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks/mutating-webhook/mutators"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook/admitters"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	vmcontroller "kubevirt.io/kubevirt/pkg/virt-controller/watch/vm"
)

type cause struct {
	Type    string `json:"type"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

type result struct {
	Source    string          `json:"source"`
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Name      string          `json:"name"`
	Allowed   bool            `json:"allowed"`
	Code      int32           `json:"code"`
	Reason    string          `json:"reason"`
	Message   string          `json:"message"`
	Causes    []cause         `json:"causes"`
	Warnings  []string        `json:"warnings"`
	Patch     json.RawMessage `json:"patch"`
	Admitted  json.RawMessage `json:"admitted"`
	Expanded  json.RawMessage `json:"expanded"`
}

var (
	vmResource  = metav1.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}
	vmiResource = metav1.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	null        = json.RawMessage("null")
)

func check(opts *options) ([]result, []string, error) {
	var objects []manifest
	for _, path := range opts.objects {
		m, err := readManifests(path)
		if err != nil {
			return nil, nil, fmt.Errorf("--objects %s: %v", path, err)
		}
		objects = append(objects, m...)
	}
	c, notes, err := newCluster(objects, opts.namespace)
	if err != nil {
		return nil, notes, err
	}

	var targets []manifest
	for _, path := range opts.files {
		m, err := readManifests(path)
		if err != nil {
			return nil, notes, fmt.Errorf("-f %s: %v", path, err)
		}
		for _, obj := range m {
			if obj.kind == "VirtualMachine" || obj.kind == "VirtualMachineInstance" {
				targets = append(targets, obj)
			} else {
				notes = append(notes, fmt.Sprintf("%s: skipping %s (not a VirtualMachine or VirtualMachineInstance)", obj.source, obj.kind))
			}
		}
	}
	var old *manifest
	if opts.old != "" {
		m, err := readManifests(opts.old)
		if err != nil {
			return nil, notes, fmt.Errorf("--old %s: %v", opts.old, err)
		}
		if len(m) != 1 {
			return nil, notes, fmt.Errorf("--old %s: holds %d objects, expected one", opts.old, len(m))
		}
		old = &m[0]
	}

	now := metav1.NewTime(time.Now())
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		seconds, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return nil, notes, fmt.Errorf("SOURCE_DATE_EPOCH must be a count of seconds since 1970, not %q", epoch)
		}
		now = metav1.NewTime(time.Unix(seconds, 0))
	}

	var results []result
	for _, t := range targets {
		r, err := c.admit(t, old, opts, now, &notes)
		if err != nil {
			return nil, notes, fmt.Errorf("%s: %v", t.source, err)
		}
		results = append(results, r)
	}
	if results == nil {
		results = []result{}
	}
	return results, notes, nil
}

// withNamespace sets metadata.namespace as the apiserver does before admission.
func withNamespace(raw []byte, namespace string) ([]byte, string, string, error) {
	obj := map[string]any{}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(&obj); err != nil {
		return nil, "", "", err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = namespace
		meta["namespace"] = ns
	}
	name, _ := meta["name"].(string)
	out, err := json.Marshal(obj)
	return out, ns, name, err
}

func review(resource metav1.GroupVersionResource, kind string, op admissionv1.Operation, namespace, name string, object, oldObject []byte) *admissionv1.AdmissionReview {
	req := &admissionv1.AdmissionRequest{
		UID:       "kubevirt-oracle",
		Kind:      metav1.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: kind},
		Resource:  resource,
		Operation: op,
		Namespace: namespace,
		Name:      name,
		Object:    runtime.RawExtension{Raw: object},
	}
	if oldObject != nil {
		req.OldObject = runtime.RawExtension{Raw: oldObject}
	}
	return &admissionv1.AdmissionReview{Request: req}
}

func (c *cluster) admit(t manifest, old *manifest, opts *options, now metav1.Time, notes *[]string) (result, error) {
	raw, namespace, name, err := withNamespace(t.raw, opts.namespace)
	if err != nil {
		return result{}, err
	}
	r := result{Source: t.source, Kind: t.kind, Namespace: namespace, Name: name,
		Causes: []cause{}, Warnings: []string{}, Patch: json.RawMessage("[]"), Admitted: null, Expanded: null}
	// kube-apiserver serves only the versions in KubeVirt's CustomResourceDefinitions
	// (ApiSupportedVersions) and answers 404 for any other before a webhook sees the object;
	// the words are kubectl's (apimachinery meta.NoKindMatchError).
	var tm typeMeta
	_ = json.Unmarshal(raw, &tm)
	if !servedVersion(tm.APIVersion) {
		r.Code, r.Reason = 404, string(metav1.StatusReasonNotFound)
		r.Message = fmt.Sprintf("no matches for kind %q in version %q", t.kind, tm.APIVersion)
		return r, nil
	}
	op := admissionv1.Create
	var oldRaw []byte
	if opts.operation == "UPDATE" {
		op = admissionv1.Update
		if oldRaw, _, _, err = withNamespace(old.raw, opts.namespace); err != nil {
			return result{}, fmt.Errorf("--old: %v", err)
		}
	}
	ctx := context.Background()

	// The mutating webhook.
	var mutated *admissionv1.AdmissionResponse
	resource := vmResource
	if t.kind == "VirtualMachine" {
		mutated = call("virtualmachines-mutator.kubevirt.io", t.source, notes, func() *admissionv1.AdmissionResponse {
			return mutators.NewVMsMutator(c.clusterConfig, c.virtClient).Mutate(review(vmResource, t.kind, op, namespace, name, raw, oldRaw))
		})
	} else {
		resource = vmiResource
		mutator := &mutators.VMIsMutator{ClusterConfig: c.clusterConfig, VMIPresetInformer: c.vmiPresetInformer, KubeVirtServiceAccounts: c.serviceAccounts}
		mutated = call("virtualmachineinstances-mutator.kubevirt.io", t.source, notes, func() *admissionv1.AdmissionResponse {
			return mutator.Mutate(review(vmiResource, t.kind, op, namespace, name, raw, oldRaw))
		})
	}
	r.Warnings = append(r.Warnings, mutated.Warnings...)
	if !mutated.Allowed {
		deny(&r, mutated)
		return r, nil
	}
	admitted := raw
	if len(mutated.Patch) > 0 {
		patchBytes, err := normalise(mutated.Patch, raw, t.kind, op, namespace, name, now)
		if err != nil {
			return result{}, err
		}
		r.Patch = patchBytes
		p, err := jsonpatch.DecodePatch(patchBytes)
		if err != nil {
			return result{}, fmt.Errorf("KubeVirt's patch: %v", err)
		}
		if admitted, err = p.Apply(raw); err != nil {
			return result{}, fmt.Errorf("applying KubeVirt's patch: %v", err)
		}
	}
	r.Admitted = admitted

	// The validating webhook on the admitted object.
	ar := review(resource, t.kind, op, namespace, name, admitted, oldRaw)
	var validated *admissionv1.AdmissionResponse
	switch {
	case t.kind == "VirtualMachine":
		validated = call("virtualmachine-validator.kubevirt.io", t.source, notes, func() *admissionv1.AdmissionResponse {
			return admitters.NewVMsAdmitter(c.clusterConfig, c.virtClient, c.informers, c.serviceAccounts).Admit(ctx, ar)
		})
	case op == admissionv1.Create:
		validated = call("virtualmachineinstances-create-validator.kubevirt.io", t.source, notes, func() *admissionv1.AdmissionResponse {
			return c.vmiCreateAdmitter().Admit(ctx, ar)
		})
	default:
		validated = call("virtualmachineinstances-update-validator.kubevirt.io", t.source, notes, func() *admissionv1.AdmissionResponse {
			return admitters.NewVMIUpdateAdmitter(c.clusterConfig, c.serviceAccounts).Admit(ctx, ar)
		})
	}
	r.Warnings = append(r.Warnings, validated.Warnings...)
	if !validated.Allowed {
		deny(&r, validated)
		return r, nil
	}
	r.Allowed, r.Code = true, 200

	if t.kind == "VirtualMachine" {
		vm := &v1.VirtualMachine{}
		if err := json.Unmarshal(admitted, vm); err != nil {
			return result{}, err
		}
		// The VM controller sees the VM as the apiserver stored it: metadata.generation 1 on
		// CREATE; on UPDATE the old generation, plus one when anything but metadata and status
		// changed (the custom resource strategy).
		vm.Generation = 1
		if op == admissionv1.Update {
			oldVM := &v1.VirtualMachine{}
			if err := json.Unmarshal(oldRaw, oldVM); err != nil {
				return result{}, fmt.Errorf("--old: %v", err)
			}
			if oldVM.Generation > 0 { // a stored object has one; an --old file may not
				vm.Generation = oldVM.Generation
			}
			if !equality.Semantic.DeepEqual(oldVM.Spec, vm.Spec) {
				vm.Generation++
			}
		}
		// A VM the webhooks admit can still fail to start: the VM controller reports the error
		// (an event, a condition) and creates no VMI. Then expanded is null and a note says why.
		expanded, err := c.expand(vm, now)
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("%s: admitted, but the VM controller would create no VirtualMachineInstance: %v", t.source, err))
		} else {
			r.Expanded = expanded
		}
	}
	return r, nil
}

// vmiCreateAdmitter is VMICreateAdmitter as pkg/virt-api/api.go registers it: the network
// spec validator is its one SpecValidator.
func (c *cluster) vmiCreateAdmitter() *admitters.VMICreateAdmitter {
	return &admitters.VMICreateAdmitter{
		ClusterConfig:           c.clusterConfig,
		KubeVirtServiceAccounts: c.serviceAccounts,
		SpecValidators: []admitters.SpecValidator{
			func(field *k8sfield.Path, vmiSpec *v1.VirtualMachineInstanceSpec, clusterCfg *virtconfig.ClusterConfig) []metav1.StatusCause {
				return netadmitter.Validate(field, vmiSpec, clusterCfg)
			},
		},
	}
}

func deny(r *result, resp *admissionv1.AdmissionResponse) {
	r.Allowed = false
	if resp.Result == nil {
		r.Code = 403
		return
	}
	r.Code = resp.Result.Code
	r.Reason = string(resp.Result.Reason)
	r.Message = resp.Result.Message
	if resp.Result.Details != nil {
		for _, c := range resp.Result.Details.Causes {
			r.Causes = append(r.Causes, cause{Type: string(c.Type), Field: c.Field, Message: c.Message})
		}
	}
}

// expand builds the VirtualMachineInstance the VM controller would create for vm, following
// startVMI in pkg/virt-controller/watch/vm/vm.go at the pinned release step by step, then runs
// the VMI mutating webhook on it as the apiserver would on its CREATE.
func (c *cluster) expand(vm *v1.VirtualMachine, now metav1.Time) (json.RawMessage, error) {
	handler := instancetypecontroller.New(c.instancetypeStore, c.clusterInstancetypeStore,
		c.preferenceStore, c.clusterPreferenceStore, c.revisionStore, c.virtClient, c.clusterConfig,
		record.NewFakeRecorder(100))

	vmi := vmcontroller.SetupVMIFromVM(vm)
	// setGenerationAnnotationOnVmi (unexported in vm.go).
	if vmi.Annotations == nil {
		vmi.Annotations = map[string]string{}
	}
	vmi.Annotations[v1.VirtualMachineGenerationAnnotation] = strconv.FormatInt(vm.Generation, 10)
	if vm.Spec.RunStrategy != nil && *vm.Spec.RunStrategy == v1.RunStrategyWaitAsReceiver {
		vmi.Annotations[v1.CreateMigrationTarget] = "true"
	}
	vmi.Finalizers = append(vmi.Finalizers, v1.VirtualMachineControllerFinalizer)
	if err := handler.ApplyAutoAttachPreferences(vm, vmi); err != nil {
		return nil, err
	}
	cbt.SetChangedBlockTrackingOnVMI(vm, vmi, c.clusterConfig, c.namespaceStore)
	vmcontroller.AutoAttachInputDevice(vmi)
	if err := netvmispec.SetDefaultNetworkInterface(c.clusterConfig, &vmi.Spec); err != nil {
		return nil, err
	}
	if err := handler.ApplyToVMI(vm, vmi); err != nil {
		return nil, err
	}
	vmi.TypeMeta = metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "VirtualMachineInstance"}

	raw, err := json.Marshal(vmi)
	if err != nil {
		return nil, err
	}
	mutator := &mutators.VMIsMutator{ClusterConfig: c.clusterConfig, VMIPresetInformer: c.vmiPresetInformer, KubeVirtServiceAccounts: c.serviceAccounts}
	resp := mutator.Mutate(review(vmiResource, "VirtualMachineInstance", admissionv1.Create, vmi.Namespace, vmi.Name, raw, nil))
	if !resp.Allowed {
		msg := ""
		if resp.Result != nil {
			msg = resp.Result.Message
		}
		return nil, fmt.Errorf("the VMI mutating webhook denied the VMI: %s", msg)
	}
	if len(resp.Patch) > 0 {
		patchBytes, err := normalise(resp.Patch, raw, "VirtualMachineInstance", admissionv1.Create, vmi.Namespace, vmi.Name, now)
		if err != nil {
			return nil, err
		}
		p, err := jsonpatch.DecodePatch(patchBytes)
		if err != nil {
			return nil, err
		}
		if raw, err = p.Apply(raw); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// The UUID namespace vmgate derives firmware UUIDs in (admission/.../vm_firmware.cpp).
var vmgateNamespace = uuid.UUID{0x6c, 0x1e, 0x4f, 0x8a, 0x3b, 0x52, 0x5d, 0x7e, 0x9a, 0x0f, 0x2d, 0x61, 0x4b, 0x83, 0xc5, 0x17}

// normalise replaces what KubeVirt randomises or reads from the clock, so that the output is
// reproducible: the firmware uuid/serial the VM mutator draws on CREATE and the firmware uuid
// the VMI defaults draw on a VMI CREATE (derived from metadata.uid, else namespace/name, as
// vmgate derives them) and the VMI's Pending phase
// transition time (SOURCE_DATE_EPOCH when set, else the time the oracle started).
func normalise(patchBytes, original []byte, kind string, op admissionv1.Operation, namespace, name string, now metav1.Time) ([]byte, error) {
	var ops []map[string]any
	decoder := json.NewDecoder(bytes.NewReader(patchBytes))
	decoder.UseNumber()
	if err := decoder.Decode(&ops); err != nil {
		return nil, fmt.Errorf("KubeVirt's patch: %v", err)
	}
	var orig struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
		Spec struct {
			Domain struct { // a VirtualMachineInstance's
				Firmware *v1.Firmware `json:"firmware"`
			} `json:"domain"`
			Template *struct {
				Spec struct {
					Domain struct {
						Firmware *v1.Firmware `json:"firmware"`
					} `json:"domain"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(original, &orig)
	for _, o := range ops {
		path, _ := o["path"].(string)
		value, _ := o["value"].(map[string]any)
		switch {
		case kind == "VirtualMachine" && op == admissionv1.Create && path == "/spec" && value != nil:
			firmware := dig(value, "template", "spec", "domain", "firmware")
			if firmware == nil {
				continue
			}
			seed := "vm:" + namespace + "/" + name
			if orig.Metadata.UID != "" {
				seed = "uid:" + orig.Metadata.UID
			}
			var before *v1.Firmware
			if orig.Spec.Template != nil {
				before = orig.Spec.Template.Spec.Domain.Firmware
			}
			if before == nil || before.UUID == "" {
				firmware["uuid"] = uuid.NewSHA1(vmgateNamespace, []byte(seed+"#firmware-uuid")).String()
			}
			if before == nil || before.Serial == "" {
				firmware["serial"] = uuid.NewSHA1(vmgateNamespace, []byte(seed+"#firmware-serial")).String()
			}
		case kind == "VirtualMachineInstance" && op == admissionv1.Create && path == "/spec" && value != nil:
			// The VMI defaults (kubevirt.io/api core/v1 SetDefaults_Firmware) draw a random
			// firmware uuid when the VMI has none; vmgate derives it from metadata.uid, else
			// "vmi:" namespace/name (admission/src/defaults/vmi_create.cpp).
			firmware := dig(value, "domain", "firmware")
			before := orig.Spec.Domain.Firmware
			if firmware == nil || (before != nil && before.UUID != "") {
				continue
			}
			seed := "vmi:" + namespace + "/" + name
			if orig.Metadata.UID != "" {
				seed = "uid:" + orig.Metadata.UID
			}
			firmware["uuid"] = uuid.NewSHA1(vmgateNamespace, []byte(seed+"#firmware-uuid")).String()
		case kind == "VirtualMachineInstance" && op == admissionv1.Create && path == "/status" && value != nil:
			stamps, _ := value["phaseTransitionTimestamps"].([]any)
			// The mutator appends one stamp, the Pending transition, to those the object had.
			if len(stamps) > 0 {
				if stamp, ok := stamps[len(stamps)-1].(map[string]any); ok {
					stamp["phaseTransitionTimestamp"] = now.UTC().Format(time.RFC3339)
				}
			}
		}
	}
	return json.Marshal(ops)
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, _ := m[k].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

func servedVersion(apiVersion string) bool {
	for _, v := range v1.ApiSupportedVersions {
		if v.Served && apiVersion == v1.GroupVersion.Group+"/"+v.Name {
			return true
		}
	}
	return false
}

// call runs one of KubeVirt's webhooks. A panic in it is what virt-api's HTTP server recovers
// from by dropping the connection: kube-apiserver's call fails, and with KubeVirt's
// failurePolicy Fail (pkg/virt-operator/resource/generate/components/webhooks.go) the request
// is rejected with an internal error naming the webhook. The panic itself goes to stderr.
func call(webhook, source string, notes *[]string, f func() *admissionv1.AdmissionResponse) (resp *admissionv1.AdmissionResponse) {
	defer func() {
		if r := recover(); r != nil {
			*notes = append(*notes, fmt.Sprintf("%s: KubeVirt's webhook %s panicked: %v", source, webhook, r))
			resp = &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
				Status:  metav1.StatusFailure,
				Code:    500,
				Reason:  metav1.StatusReasonInternalError,
				Message: fmt.Sprintf("Internal error occurred: failed calling webhook %q: failed to call webhook: EOF", webhook),
			}}
		}
	}()
	return f()
}
