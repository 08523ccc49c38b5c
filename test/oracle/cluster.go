package main

// The cluster the webhooks see, served from files through KubeVirt's own fakes, as KubeVirt's
// unit tests build it (pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator_test.go):
// a gomock kubecli.MockKubevirtClient whose typed clients are the generated fake clientsets,
// informer stores from pkg/testutils, and a ClusterConfig from testutils'
// NewFakeClusterConfigUsingKVWithCPUArch.

import (
	"context"
	"encoding/json"
	"fmt"

	"go.uber.org/mock/gomock"
	appsv1 "k8s.io/api/apps/v1"
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	v1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdifake "kubevirt.io/client-go/containerizeddataimporter/fake"
	"kubevirt.io/client-go/kubecli"
	kubevirtfake "kubevirt.io/client-go/kubevirt/fake"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"kubevirt.io/kubevirt/pkg/testutils"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
)

// The architecture the cluster reports when the KubeVirt CR names none (amd64, as vmgate assumes).
const defaultArch = "amd64"

type cluster struct {
	clusterConfig *virtconfig.ClusterConfig
	virtClient    *kubecli.MockKubevirtClient
	informers     *webhooks.Informers

	instancetypeStore, clusterInstancetypeStore cache.Store
	preferenceStore, clusterPreferenceStore     cache.Store
	revisionStore, namespaceStore               cache.Store
	vmiPresetInformer                           cache.SharedIndexInformer
	serviceAccounts                             map[string]struct{}
}

// unexpectedCall makes a gomock expectation failure (a call the oracle did not mock) a panic
// that main reports as an oracle error, never a verdict.
type unexpectedCall struct{}

func (unexpectedCall) Errorf(format string, args ...any) {
	panic(fmt.Sprintf("oracle: unmocked client call: "+format, args...))
}
func (unexpectedCall) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("oracle: unmocked client call: "+format, args...))
}
func (unexpectedCall) Helper() {}

func decodeInto(m manifest, obj runtime.Object, namespace string, namespaced bool) error {
	if err := json.Unmarshal(m.raw, obj); err != nil {
		return fmt.Errorf("%s: %v", m.source, err)
	}
	if namespaced {
		if acc, ok := obj.(metav1.Object); ok && acc.GetNamespace() == "" {
			acc.SetNamespace(namespace)
		}
	}
	return nil
}

func newCluster(objects []manifest, namespace string) (*cluster, []string, error) {
	var notes []string
	var kv *v1.KubeVirt
	var k8sObjects, kubevirtObjects, cdiObjects []runtime.Object
	c := &cluster{
		instancetypeStore:        cache.NewStore(cache.MetaNamespaceKeyFunc),
		clusterInstancetypeStore: cache.NewStore(cache.MetaNamespaceKeyFunc),
		preferenceStore:          cache.NewStore(cache.MetaNamespaceKeyFunc),
		clusterPreferenceStore:   cache.NewStore(cache.MetaNamespaceKeyFunc),
		revisionStore:            cache.NewStore(cache.MetaNamespaceKeyFunc),
	}
	namespaceInformer, _ := testutils.NewFakeInformerFor(&k8sv1.Namespace{})
	dataSourceInformer, _ := testutils.NewFakeInformerFor(&cdiv1.DataSource{})
	c.vmiPresetInformer, _ = testutils.NewFakeInformerFor(&v1.VirtualMachineInstancePreset{})
	c.namespaceStore = namespaceInformer.GetStore()

	for _, m := range objects {
		var err error
		switch m.kind {
		case "KubeVirt":
			kv = &v1.KubeVirt{}
			err = decodeInto(m, kv, "kubevirt", true)
		case "VirtualMachineInstancetype":
			obj := &instancetypev1beta1.VirtualMachineInstancetype{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				kubevirtObjects = append(kubevirtObjects, obj)
				err = c.instancetypeStore.Add(obj)
			}
		case "VirtualMachineClusterInstancetype":
			obj := &instancetypev1beta1.VirtualMachineClusterInstancetype{}
			if err = decodeInto(m, obj, namespace, false); err == nil {
				kubevirtObjects = append(kubevirtObjects, obj)
				err = c.clusterInstancetypeStore.Add(obj)
			}
		case "VirtualMachinePreference":
			obj := &instancetypev1beta1.VirtualMachinePreference{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				kubevirtObjects = append(kubevirtObjects, obj)
				err = c.preferenceStore.Add(obj)
			}
		case "VirtualMachineClusterPreference":
			obj := &instancetypev1beta1.VirtualMachineClusterPreference{}
			if err = decodeInto(m, obj, namespace, false); err == nil {
				kubevirtObjects = append(kubevirtObjects, obj)
				err = c.clusterPreferenceStore.Add(obj)
			}
		case "VirtualMachineInstancePreset":
			obj := &v1.VirtualMachineInstancePreset{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				kubevirtObjects = append(kubevirtObjects, obj)
				err = c.vmiPresetInformer.GetStore().Add(obj)
			}
		case "ControllerRevision":
			obj := &appsv1.ControllerRevision{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				k8sObjects = append(k8sObjects, obj)
				err = c.revisionStore.Add(obj)
			}
		case "PersistentVolumeClaim":
			obj := &k8sv1.PersistentVolumeClaim{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				k8sObjects = append(k8sObjects, obj)
			}
		case "Namespace":
			obj := &k8sv1.Namespace{}
			if err = decodeInto(m, obj, namespace, false); err == nil {
				k8sObjects = append(k8sObjects, obj)
				err = c.namespaceStore.Add(obj)
			}
		case "DataVolume":
			obj := &cdiv1.DataVolume{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				cdiObjects = append(cdiObjects, obj)
			}
		case "DataSource":
			obj := &cdiv1.DataSource{}
			if err = decodeInto(m, obj, namespace, true); err == nil {
				cdiObjects = append(cdiObjects, obj)
				err = dataSourceInformer.GetStore().Add(obj)
			}
		default:
			notes = append(notes, fmt.Sprintf("%s: skipping %s (not a cluster object the webhooks read)", m.source, m.kind))
		}
		if err != nil {
			return nil, nil, err
		}
	}

	if kv == nil {
		kv = &v1.KubeVirt{}
	}
	kv.Name, kv.Namespace = "kubevirt", "kubevirt"
	arch := kv.Status.DefaultArchitecture
	if arch == "" {
		arch = defaultArch
		kv.Status.DefaultArchitecture = arch
	}
	c.clusterConfig, _, _ = testutils.NewFakeClusterConfigUsingKVWithCPUArch(kv, arch)
	c.serviceAccounts = webhooks.KubeVirtServiceAccounts("kubevirt")
	c.informers = &webhooks.Informers{
		VMIPresetInformer:  c.vmiPresetInformer,
		DataSourceInformer: dataSourceInformer,
		NamespaceInformer:  namespaceInformer,
	}

	k8sClient := k8sfake.NewSimpleClientset(k8sObjects...)
	kubevirtClient := kubevirtfake.NewSimpleClientset(kubevirtObjects...)
	cdiClient := cdifake.NewSimpleClientset(cdiObjects...)

	ctrl := gomock.NewController(unexpectedCall{})
	virtClient := kubecli.NewMockKubevirtClient(ctrl)
	instancetypes := kubevirtClient.InstancetypeV1beta1()
	virtClient.EXPECT().VirtualMachineInstancetype(gomock.Any()).DoAndReturn(instancetypes.VirtualMachineInstancetypes).AnyTimes()
	virtClient.EXPECT().VirtualMachineClusterInstancetype().Return(instancetypes.VirtualMachineClusterInstancetypes()).AnyTimes()
	virtClient.EXPECT().VirtualMachinePreference(gomock.Any()).DoAndReturn(instancetypes.VirtualMachinePreferences).AnyTimes()
	virtClient.EXPECT().VirtualMachineClusterPreference().Return(instancetypes.VirtualMachineClusterPreferences()).AnyTimes()
	virtClient.EXPECT().CoreV1().Return(k8sClient.CoreV1()).AnyTimes()
	virtClient.EXPECT().AppsV1().Return(k8sClient.AppsV1()).AnyTimes()
	virtClient.EXPECT().StorageV1().Return(k8sClient.StorageV1()).AnyTimes()
	virtClient.EXPECT().CdiClient().Return(cdiClient).AnyTimes()
	virtClient.EXPECT().GeneratedKubeVirtClient().Return(kubevirtClient).AnyTimes()
	// No VirtualMachineInstance exists: the oracle checks objects, it runs nothing.
	vmiClient := kubecli.NewMockVirtualMachineInstanceInterface(ctrl)
	vmiClient.EXPECT().Get(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, name string, _ metav1.GetOptions) (*v1.VirtualMachineInstance, error) {
			return nil, errors.NewNotFound(v1.Resource("virtualmachineinstances"), name)
		}).AnyTimes()
	virtClient.EXPECT().VirtualMachineInstance(gomock.Any()).Return(vmiClient).AnyTimes()
	c.virtClient = virtClient
	return c, notes, nil
}
