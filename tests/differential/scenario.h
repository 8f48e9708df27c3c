// Random scheduling scenarios for the differential suite: nodes with zones,
// labels, hard and PreferNoSchedule taints, images, and readiness as the
// node lifecycle controller shows it; namespaces with labels; pods already
// placed, with labels, owners, host ports, pod (anti-)affinity (with
// namespaces listed, or chosen by selectors, some of which select
// namespaces without labels too), init and sidecar containers, requests
// of every form (none, partial, explicit 0, pod-level) and in-place
// resizes; the Services, ReplicaSets, StatefulSets and
// ReplicationControllers the default topology spread reads; and an
// incoming pod with any mix of node selector, required and preferred node
// affinity, tolerations, pod (anti-)affinity and topology spread
// constraints.
//
// About a third of the scenarios have storage too (a stream of random
// numbers of its own, so that the rest of a scenario is the same with or
// without it): StorageClasses (WaitForFirstConsumer with and without a
// provisioner, with allowedTopologies, Immediate); PersistentVolumes free,
// pre-bound, bound, released or being deleted, with zone and region labels
// (beta ones, multi-zone values), node affinity, CSI, local and NFS
// sources, block mode; PersistentVolumeClaims bound, pre-bound, waiting for
// their first consumer (with selectors, ReadWriteOncePod, a selected node),
// immediate and unbound, lost or being deleted; generic ephemeral volumes'
// claims, owned by their pod or not, or not created yet; CSINodes with
// attach limits; CSIDrivers that must be on the node (or need not), that
// report capacity, and CSIStorageCapacities per zone; placed
// pods using claims; an incoming pod with up to three claims, some
// missing. Left out is what kube-scheduler itself decides by
// chance (two candidate PVs of a class with one capacity, two delayed
// claims of a pod with one request: Go map order, an unstable sort) and
// what we do not implement (VolumeAttachment, in-tree volume sources, classes
// without a binding mode).
//
// About a quarter of the scenarios have nominated pods (a stream of their
// own too): one to three unassigned pods with status.nominatedNodeName (as
// a preemption leaves them), on existing nodes and rarely on one that does
// not exist, with priorities below, equal to and above the incoming pod's
// (which then has a spec.priority, and a priorityClassName unless it is 0,
// as admission sets them); with requests that make their node too full
// for it, sometimes its host ports, labels its spread constraints and
// anti-affinity may select, required anti-affinity terms that may select
// it; rarely a stale copy of the incoming pod itself (its UID, which
// kube-scheduler ignores). No volumes.
//
// About a third of the scenarios make preemption matter (a stream of their
// own): the placed pods get priorities below, equal to and above the
// incoming pod's, and start times (some equal); pods are added that fill
// most nodes; some pods are being deleted, most by a scheduler's
// preemption (a DisruptionTarget condition); the incoming pod may have
// preemptionPolicy Never or a status.nominatedNodeName; and
// PodDisruptionBudgets select some pods. Elsewhere, when the incoming pod
// has a priority above the placed pods' 0, they get distinct start times
// (kube-scheduler orders pods without one by the clock of each
// comparison).
//
// What newer releases read has a stream of its own too: nodes declaring
// features (NodeDeclaredFeatures, 1.36 on); an incoming pod with an init
// container restarting every container on an exit code, sometimes with a
// bind mount option, with host network in a user namespace, or with an
// image volume (ImageLocality, 1.36 on); placed pods with the pod-level
// resources kubelets of 1.36 on report.
//
// Every object is Kubernetes JSON as the apiserver would serve it after
// admission (namespaces set; some containers without requests), so the
// same text goes to `testenv oracle` (kube-scheduler's plugins) and to our
// decoder.
// The scenarios leave out what the scheduler does not implement yet: see
// docs/testing.md, "The differential suite".
// Pure and seeded: the same seed gives the same scenario.
#ifndef METRICS_SCHEDULER_TESTS_DIFFERENTIAL_SCENARIO_H_
#define METRICS_SCHEDULER_TESTS_DIFFERENTIAL_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ms::differential {

struct Scenario {
  uint64_t seed = 0;
  std::string name;  // "seed-<seed>"
  std::vector<std::string> nodes;
  std::vector<std::string> placed;  // pods with spec.nodeName
  // Unassigned pods with status.nominatedNodeName.
  std::vector<std::string> nominated;
  std::vector<std::string> namespaces;
  std::vector<std::string> services;
  std::vector<std::string> replica_sets;
  std::vector<std::string> stateful_sets;
  std::vector<std::string> replication_controllers;
  std::vector<std::string> claims;  // PersistentVolumeClaims
  std::vector<std::string> volumes;  // PersistentVolumes
  std::vector<std::string> storage_classes;
  std::vector<std::string> csi_nodes;
  std::vector<std::string> csi_drivers;
  std::vector<std::string> capacities;  // CSIStorageCapacities
  std::vector<std::string> budgets;  // PodDisruptionBudgets
  // Whether the preemption part made preemption matter (priorities,
  // nodes filled): the scores' coverage leaves these out.
  bool preemption = false;
  std::string pod;  // the incoming pod

  // One line of `testenv oracle`'s input.
  std::string OracleLine() const;
  // The scenario for a person: the same objects, one per line (JSON is
  // YAML too).
  std::string Describe() const;
};

Scenario Generate(uint64_t seed);

}  // namespace ms::differential

#endif  // METRICS_SCHEDULER_TESTS_DIFFERENTIAL_SCENARIO_H_
