"""S3 tiers and FSx for Lustre: encryption, public access, TLS-only policies, versioning, access logs, lifecycle
rules, Lustre tiers, ports and the S3 link."""

from __future__ import annotations

from typing import Any

from aiinfra.plan.runtime import UNKNOWN, PlanResult

EAST = "prod-us-east-1"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def one(plan: PlanResult, type_: str, name: str) -> dict:
    return plan.one(type_, name).inputs


def test_buckets_block_public_access_and_use_sse_kms_with_bucket_keys(prod_plan: PlanResult) -> None:
    for bucket in ("datasets", "ckpt"):
        block = one(prod_plan, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", f"{EAST}-{bucket}-public-access")
        assert all(block[flag] is True for flag in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
        rule = one(prod_plan, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                   f"{EAST}-{bucket}-encryption")["rules"][0]
        assert rule["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
        assert rule["applyServerSideEncryptionByDefault"]["kmsMasterKeyId"] and rule["bucketKeyEnabled"] is True
        versioning = one(prod_plan, "aws:s3/bucketVersioning:BucketVersioning", f"{EAST}-{bucket}-versioning")
        assert versioning["versioningConfiguration"] == {"status": "Enabled"}
        logging = prod_plan.one("aws:s3/bucketLogging:BucketLogging", f"{EAST}-{bucket}-logging")
        assert logging.inputs["targetPrefix"] == f"s3/{bucket}/"
        assert prod_plan.one("aws:s3/bucketPolicy:BucketPolicy", f"{EAST}-log-archive-policy").urn in logging.dependencies
        # The policy waits for the public access block: S3 can refuse the two at once (409 OperationAborted,
        # hashicorp/terraform-provider-aws#7628), and teardown removes them in the opposite order.
        public_access = prod_plan.one("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", f"{EAST}-{bucket}-public-access")
        assert public_access.urn in prod_plan.one("aws:s3/bucketPolicy:BucketPolicy", f"{EAST}-{bucket}-policy").dependencies


def test_bucket_names_are_stable_and_tagged_with_class_and_zone(prod_plan: PlanResult) -> None:
    bucket = prod_plan.one("aws:s3/bucket:Bucket", "prod-eu-west-1-eu-models-bucket")
    assert bucket.inputs["bucket"].startswith("prod-eu-models-") and len(bucket.inputs["bucket"]) <= 63
    assert bucket.inputs["tags"] == {"data-class": "models", "data-zone": "eu"}
    assert bucket.inputs["forceDestroy"] is False and bucket.inputs["region"] == "eu-west-1"


def test_bucket_policy_is_a_known_document_once_the_bucket_exists(prod_plan: PlanResult) -> None:
    # The policy names the bucket's ARN (known after create); its content is checked in test_pure.
    policy = one(prod_plan, "aws:s3/bucketPolicy:BucketPolicy", f"{EAST}-datasets-policy")
    assert policy["bucket"] == f"{EAST}-datasets-bucket-id" and policy["policy"] == UNKNOWN


def test_lifecycle_rules_follow_the_tiering_thresholds(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    datasets = one(prod_plan, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{EAST}-datasets-lifecycle")["rules"][0]
    assert datasets["status"] == "Enabled" and datasets["filter"] == {"prefix": ""}
    # Linked to FSx for Lustre, which cannot read DEEP_ARCHIVE objects: no archive step.
    assert datasets["transitions"] == [{"days": 30, "storageClass": "STANDARD_IA"}, {"days": 90, "storageClass": "GLACIER_IR"}]
    assert datasets["expiration"] == {"expiredObjectDeleteMarker": True}
    assert datasets["noncurrentVersionExpiration"] == {"noncurrentDays": 90}
    assert datasets["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7}
    ckpt = one(prod_plan, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{EAST}-ckpt-lifecycle")["rules"][0]
    assert ckpt["transitions"] == [{"days": 30, "storageClass": "STANDARD_IA"}, {"days": 90, "storageClass": "GLACIER_IR"}]
    assert ckpt["expiration"] == {"days": 400} and ckpt["noncurrentVersionExpiration"] == {"noncurrentDays": 14}
    dev = dev_plan.one("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "dev-us-east-1-datasets-lifecycle").inputs["rules"][0]
    assert dev["transitions"] == [{"days": 30, "storageClass": "STANDARD_IA"}] and dev["expiration"] == {"days": 60}


def test_intelligent_tiering_as_the_warm_class(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"warm_storage_class": "intelligent_tiering", "regions": {"us-east-1": {
        "network": {"cidr": "10.9.0.0/16"}, "buckets": {"models": {"versioning": False}}}}})
    rule = plan.one("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "test-us-east-1-models-lifecycle").inputs["rules"][0]
    assert [t["storageClass"] for t in rule["transitions"]] == ["INTELLIGENT_TIERING", "GLACIER_IR", "DEEP_ARCHIVE"]
    assert "noncurrentVersionExpiration" not in rule
    assert not [r for r in plan.of_type("aws:s3/bucketVersioning:BucketVersioning") if "models" in r.name]


def test_log_bucket_uses_sse_s3_and_admits_log_delivery_only(prod_plan: PlanResult) -> None:
    rule = one(prod_plan, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
               f"{EAST}-log-archive-encryption")["rules"][0]
    assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}  # the only option S3/ELB log delivery supports
    lifecycle = one(prod_plan, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", f"{EAST}-log-archive-lifecycle")
    assert lifecycle["rules"][0]["expiration"] == {"days": 365}
    # The bucket is versioned: expiration only adds a delete marker, the log itself goes 30 days later.
    assert lifecycle["rules"][0]["noncurrentVersionExpiration"] == {"noncurrentDays": 30}
    bucket = prod_plan.one("aws:s3/bucket:Bucket", f"{EAST}-log-archive-bucket")
    assert bucket.protect and bucket.retainOnDelete


def test_lustre_is_persistent_encrypted_and_linked_to_s3(prod_plan: PlanResult) -> None:
    fs = prod_plan.one(LUSTRE, f"{EAST}-train-fs")
    assert fs.protect and fs.retainOnDelete
    inputs = fs.inputs
    assert inputs["deploymentType"] == "PERSISTENT_2" and inputs["perUnitStorageThroughput"] == 500
    assert inputs["storageCapacity"] == 4800 and inputs["kmsKeyId"] and inputs["storageType"] == "SSD"
    assert inputs["subnetIds"] == f"{EAST}-private-0-id" and inputs["fileSystemTypeVersion"] == "2.15"
    assert inputs["logConfiguration"]["level"] == "WARN_ERROR" and inputs["copyTagsToBackups"] is True
    logs = one(prod_plan, "aws:cloudwatch/logGroup:LogGroup", f"{EAST}-train-logs")
    assert logs["name"] == f"/aws/fsx/lustre/{EAST}-train" and logs["kmsKeyId"]
    link = one(prod_plan, "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", f"{EAST}-train-s3-link")
    bucket = prod_plan.one("aws:s3/bucket:Bucket", f"{EAST}-datasets-bucket").inputs["bucket"]
    assert link["dataRepositoryPath"] == f"s3://{bucket}/train/" and link["fileSystemPath"] == "/"
    # A file deleted on Lustre is never deleted from the bucket (no DELETED export event); the bucket's deletions reach Lustre.
    assert link["s3"] == {"autoImportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]},
                          "autoExportPolicy": {"events": ["NEW", "CHANGED"]}}
    assert link["batchImportMetaDataOnCreate"] is True and link["deleteDataInFilesystem"] is False


def test_lustre_admits_its_ports_from_itself_and_the_cluster_only(prod_plan: PlanResult) -> None:
    group = one(prod_plan, "aws:ec2/securityGroup:SecurityGroup", f"{EAST}-train-sg")
    assert [(r["fromPort"], r["toPort"], r["protocol"]) for r in group["ingress"]] == [(988, 988, "tcp"), (1018, 1023, "tcp")]
    for rule in group["ingress"]:
        assert rule["self"] is True and "cidrBlocks" not in rule
        assert len(rule["securityGroups"]) == 1  # the EKS cluster security group (known once the cluster exists)
    back = [prod_plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f"{EAST}-train-nodes-from-lustre-{port}").inputs
            for port in (988, 1018)]
    assert [(r["fromPort"], r["toPort"], r["referencedSecurityGroupId"]) for r in back] == [
        (988, 988, f"{EAST}-train-sg-id"), (1018, 1023, f"{EAST}-train-sg-id")]


def test_scratch_lustre_in_dev_is_unprotected_and_takes_no_throughput_key_or_backup_setting(dev_plan: PlanResult) -> None:
    fs = dev_plan.one(LUSTRE, "dev-us-east-1-scratch-fs")
    assert not fs.protect and not fs.retainOnDelete
    assert fs.inputs["deploymentType"] == "SCRATCH_2" and fs.inputs["storageCapacity"] == 1200
    assert {"perUnitStorageThroughput", "kmsKeyId", "copyTagsToBackups", "automaticBackupRetentionDays"}.isdisjoint(fs.inputs)
    assert dev_plan.one("aws:s3/bucket:Bucket", "dev-us-east-1-datasets-bucket").inputs["forceDestroy"] is True


def test_lustre_without_a_cluster_admits_the_private_subnets(plan_aws) -> None:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16", "zones": 2},
                                               "lustre": {"fs": {"size_gib": 1200}}}}})
    rule = plan.one("aws:ec2/securityGroup:SecurityGroup", "test-us-east-1-fs-sg").inputs["ingress"][0]
    assert rule["cidrBlocks"] == ["10.9.0.0/20", "10.9.16.0/20"] and "securityGroups" not in rule
    assert not plan.of_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")


SECURITY_CHILDREN = {"public-access": "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
                     "encryption": "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                     "versioning": "aws:s3/bucketVersioning:BucketVersioning", "policy": "aws:s3/bucketPolicy:BucketPolicy"}


def test_security_settings_of_buckets_are_protected_outside_dev(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    # Removing a bucket component must not delete its public access block, encryption, versioning or TLS-only policy
    # before the protected bucket's own delete fails; nothing of theirs needs keeping, so no retain_on_delete.
    for plan, buckets, protected in ((prod_plan, ("datasets", "ckpt", "log-archive"), True),
                                     (dev_plan, ("datasets", "log-archive"), False)):
        region = f"{plan.stack}-us-east-1"
        for bucket in buckets:
            for suffix, type_ in SECURITY_CHILDREN.items():
                child = plan.one(type_, f"{region}-{bucket}-{suffix}")
                assert child.protect is protected and not child.retainOnDelete, child.name
        # the rest of a bucket's children stay unprotected
        for type_, suffix in (("aws:s3/bucketLogging:BucketLogging", "logging"),
                              ("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration", "lifecycle")):
            assert not plan.one(type_, f"{region}-datasets-{suffix}").protect


def test_lustre_linked_to_s3_keeps_no_backups(prod_plan: PlanResult) -> None:
    # FSx for Lustre backs up only persistent file systems that are not linked to an S3 data repository ("Backup
    # support in FSx for Lustre", https://docs.aws.amazon.com/fsx/latest/LustreGuide/using-backups-fsx.html; CreateBackup,
    # https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateBackup.html). The production file system has a
    # data repository association: no automatic backups (0, spelled out), no final backup settings.
    assert prod_plan.one("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", f"{EAST}-train-s3-link")
    inputs = prod_plan.one(LUSTRE, f"{EAST}-train-fs").inputs
    assert {"dailyAutomaticBackupStartTime", "skipFinalBackup"}.isdisjoint(inputs)
    assert inputs["automaticBackupRetentionDays"] == 0  # spelled out: linked after having backups, it drops them


def _file_system(plan_aws, environment: str = "test", **region: Any) -> dict:  # noqa: ANN001
    plan = plan_aws({"regions": {"us-east-1": {"network": {"cidr": "10.9.0.0/16"}, **region}}}, environment=environment)
    return plan.one(LUSTRE).inputs


def test_an_unlinked_persistent_file_system_is_backed_up_daily_when_protected(plan_aws) -> None:  # noqa: ANN001
    """Without a bucket the file system holds the only copy, and FSx keeps no backups unless asked
    (CreateFileSystemLustreConfiguration AutomaticBackupRetentionDays: "The default is 0")."""
    unlinked = {"fs": {"size_gib": 2400, "throughput_mbps_per_tib": 250}}
    assert _file_system(plan_aws, lustre=unlinked)["automaticBackupRetentionDays"] == 7
    # dev keeps nothing of a torn-down environment (not protected), so no backups to pay for either
    assert _file_system(plan_aws, "dev", lustre=unlinked)["automaticBackupRetentionDays"] == 0


def test_lustre_goes_where_the_zone_pinned_pools_are(plan_aws) -> None:  # noqa: ANN001
    """Capacity Block, reservation and EFA/compact pools sit in one zone; the file system follows them when they agree,
    so training traffic does not cross zones. FSx cannot move a file system (a new subnet replaces it): the subnet is
    ignored after creation."""
    block = {"accelerator": "h100-80gb", "accelerators_per_node": 8, "capacity": "capacity_block",
             "reservation": "cr-0a1b2c3d4e5f60718", "max_nodes": 2}
    lustre = {"fs": {"size_gib": 1200}}
    in_b = _file_system(plan_aws, cluster={}, lustre=lustre, gpu_pools={"train": {**block, "zones": ["us-east-1b"]}})
    assert in_b["subnetIds"] == "test-us-east-1-private-1-id"
    # EFA pool without zones: the first zone, which disagrees with the block's: the first subnet
    efa = {"accelerator": "trainium2", "efa": True, "max_nodes": 2}
    split = _file_system(plan_aws, cluster={}, lustre=lustre, gpu_pools={"train": {**block, "zones": ["us-east-1b"]}, "efa": efa})
    assert split["subnetIds"] == "test-us-east-1-private-0-id"
    both_b = _file_system(plan_aws, cluster={}, lustre=lustre,
                          gpu_pools={"train": {**block, "zones": ["us-east-1b"]}, "efa": {**efa, "zones": ["us-east-1b"]}})
    assert both_b["subnetIds"] == "test-us-east-1-private-1-id"
    # a pool given one zone pins it too; one spread over every zone pins nothing
    in_c = _file_system(plan_aws, cluster={}, lustre=lustre, gpu_pools={"spot": {"accelerator": "l4", "capacity": "spot",
                                                                                  "zones": ["us-east-1c"]}})
    assert in_c["subnetIds"] == "test-us-east-1-private-2-id"
    spread = _file_system(plan_aws, cluster={}, lustre=lustre, gpu_pools={"spot": {"accelerator": "l4", "capacity": "spot"}})
    assert spread["subnetIds"] == "test-us-east-1-private-0-id"


def test_the_reference_file_systems_keep_their_subnet(prod_plan: PlanResult, dev_plan: PlanResult) -> None:
    # prod pins h100-train to us-east-1a and trn2-train (EFA, no zones) to the first zone: the first subnet, as before.
    fs = prod_plan.one(LUSTRE, f"{EAST}-train-fs")
    assert fs.inputs["subnetIds"] == f"{EAST}-private-0-id" and fs.ignoreChanges == ["subnetIds"]
    assert dev_plan.one(LUSTRE, "dev-us-east-1-scratch-fs").inputs["subnetIds"] == "dev-us-east-1-private-0-id"
