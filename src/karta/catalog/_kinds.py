"""What the README's table of kinds says of each catalog kind that the definitions cannot say.

Owns, per workload kind of the built-in catalog (group and kind; a kind may have a definition per
version), the project that ships it and a few words on what it is. Everything else in the table
(versions, where the status is read from, gang) is read from the definitions by
:func:`karta.catalog.render_kinds_table`, which fails when a catalog kind has no entry here or an
entry names a kind the catalog lacks: a new definition's kind is added here in the same change.
"""

from __future__ import annotations

# (group, kind) -> (project, what it is); "" is the core group.
KINDS: dict[tuple[str, str], tuple[str, str]] = {
    ("", "Pod"): ("Kubernetes", "a single pod"),
    ("agents.x-k8s.io", "Sandbox"): ("Kubernetes agent-sandbox", "an isolated, suspendable agent pod"),
    ("apps.nvidia.com", "NIMCache"): ("NVIDIA NIM Operator", "a model cache filled by a download job"),
    ("apps.nvidia.com", "NIMService"): ("NVIDIA NIM Operator", "a NIM inference service"),
    ("apps", "DaemonSet"): ("Kubernetes", "one pod per eligible node"),
    ("apps", "Deployment"): ("Kubernetes", "replicated stateless pods"),
    ("apps", "ReplicaSet"): ("Kubernetes", "replicated pods (a Deployment's revision)"),
    ("apps", "StatefulSet"): ("Kubernetes", "replicated pods with stable identities"),
    ("argoproj.io", "Workflow"): ("Argo Workflows", "a DAG or steps of pods"),
    ("batch.volcano.sh", "Job"): ("Volcano", "a batch job of tasks, gang-scheduled"),
    ("batch", "CronJob"): ("Kubernetes", "Jobs on a schedule"),
    ("batch", "Job"): ("Kubernetes", "pods run to completion"),
    ("grove.io", "PodCliqueSet"): ("NVIDIA Grove", "multi-role inference (cliques and scaling groups)"),
    ("jobset.x-k8s.io", "JobSet"): ("Kubernetes JobSet", "a group of replicated Jobs"),
    ("kaito.sh", "Workspace"): ("KAITO", "model inference or fine-tuning on provisioned GPU nodes"),
    ("kubeai.org", "Model"): ("KubeAI", "an autoscaled model server (vLLM, Ollama, ...)"),
    ("kubeflow.org", "Experiment"): ("Kubeflow Katib", "a hyper-parameter search (its pods through Trials)"),
    ("kubeflow.org", "JAXJob"): ("Kubeflow Training Operator", "distributed JAX training"),
    ("kubeflow.org", "MPIJob"): ("Kubeflow MPI Operator", "MPI training (launcher and workers)"),
    ("kubeflow.org", "Notebook"): ("Kubeflow Notebooks", "a Jupyter notebook server"),
    ("kubeflow.org", "PaddleJob"): ("Kubeflow Training Operator", "distributed PaddlePaddle training"),
    ("kubeflow.org", "PyTorchJob"): ("Kubeflow Training Operator", "distributed PyTorch training"),
    ("kubeflow.org", "ScheduledWorkflow"): (
        "Kubeflow Pipelines",
        "pipeline runs on a schedule (Argo Workflows)",
    ),
    ("kubeflow.org", "TFJob"): ("Kubeflow Training Operator", "distributed TensorFlow training"),
    ("kubeflow.org", "Trial"): ("Kubeflow Katib", "one hyper-parameter trial (a Job or PyTorchJob)"),
    ("kubeflow.org", "XGBoostJob"): ("Kubeflow Training Operator", "distributed XGBoost training"),
    ("kubevirt.io", "VirtualMachine"): ("KubeVirt", "a virtual machine (its instances)"),
    ("kubevirt.io", "VirtualMachineInstance"): ("KubeVirt", "a running VM in a virt-launcher pod"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        "Kubernetes LWS",
        "replicated leader and worker groups",
    ),
    ("machinelearning.seldon.io", "SeldonDeployment"): ("Seldon Core v1", "an inference graph of predictors"),
    ("milvus.io", "Milvus"): ("Milvus Operator", "the Milvus vector database"),
    ("mlops.seldon.io", "Model"): ("Seldon Core 2", "a model loaded on Servers (no pods of its own)"),
    ("mlops.seldon.io", "Server"): ("Seldon Core 2", "an inference server (MLServer, Triton)"),
    ("nvidia.com", "DynamoGraphDeployment"): ("NVIDIA Dynamo", "disaggregated LLM serving graph"),
    ("production-stack.vllm.ai", "VLLMRuntime"): (
        "vLLM production stack",
        "a vLLM model server (its Deployment)",
    ),
    ("ray.io", "RayCluster"): ("KubeRay", "a Ray cluster (head and worker groups)"),
    ("ray.io", "RayJob"): ("KubeRay", "a Ray job on its own cluster"),
    ("ray.io", "RayService"): ("KubeRay", "Ray Serve on a cluster"),
    ("serving.knative.dev", "Service"): ("Knative Serving", "a scale-to-zero service"),
    ("serving.kserve.io", "InferenceService"): (
        "KServe",
        "a model server (predictor, transformer, explainer)",
    ),
    ("serving.kserve.io", "LLMInferenceService"): ("KServe", "LLM serving (prefill, decode, router)"),
    ("slinky.slurm.net", "NodeSet"): ("Slinky (SchedMD)", "Slurm compute nodes as pods"),
    ("sparkoperator.k8s.io", "ScheduledSparkApplication"): (
        "Kubeflow Spark Operator",
        "SparkApplications on a schedule",
    ),
    ("sparkoperator.k8s.io", "SparkApplication"): ("Kubeflow Spark Operator", "a Spark driver and executors"),
    ("tekton.dev", "PipelineRun"): ("Tekton", "a pipeline's run (its TaskRuns)"),
    ("tekton.dev", "TaskRun"): ("Tekton", "a task's run in one pod"),
    ("trainer.kubeflow.org", "TrainJob"): ("Kubeflow Trainer", "training from a training runtime"),
    ("workload.codeflare.dev", "AppWrapper"): ("CodeFlare AppWrapper", "a bundle of resources queued as one"),
    ("workspace.devfile.io", "DevWorkspace"): (
        "Devfile DevWorkspace Operator",
        "a cloud dev environment (its Deployment)",
    ),
}
