# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The Kubernetes manifests (deploy/kubernetes) and the Containerfile,
# checked offline: make test-deploy. The schemas come from npm's
# kubernetes-models, installed into $(OUTPUT)/deploy-node on first use.

.PHONY: test-deploy

test-deploy: $(OUTPUT)/hdrstrip
	$(Q)tests/deploy/test_deploy.sh $(OUTPUT)/hdrstrip $(OUTPUT)/deploy-node
