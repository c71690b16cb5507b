# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_intent_source
short_description: "Manage swmgr IntentSource objects"
description:
  - "Where the switch's intended configuration comes from (docs/ztp.md): a saved configuration document at a URL (HTTP or HTTPS) or a file in a git repository at a ref (RepoURL, Path, TargetRevision), polled every Interval seconds (or at once by IntentFetch), verified (an ed25519 detached signature at the URL + \".sig\", or Path + \".sig\" at the same commit), and applied whole as one commit of source intent awaiting confirmation by a health check when it changed (the intent is the whole configuration: objects it does not list are deleted; accounts and the IntentSource are kept, and a document holding either is refused). Drift from it is DriftState. One source (Name default)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of IntentSource: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The IntentSource objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"default\")."
        type: str
        choices:
          - "default"
      url:
        description:
          - "API field C(URL)."
          - "the document's URL; its signature is at the URL + \".sig\" (64 bytes, raw or base64). Either URL or RepoURL."
        type: str
      repo_url:
        description:
          - "API field C(RepoURL)."
          - "a git repository holding the document (https:// or file://), fetched with git into the data directory; either URL or RepoURL."
        type: str
      path:
        description:
          - "API field C(Path)."
          - "with RepoURL: the document's path in the repository; its signature is Path + \".sig\" at the same commit."
        type: str
      target_revision:
        description:
          - "API field C(TargetRevision)."
          - "with RepoURL: the branch, tag or commit id whose document is applied (HEAD: the repository's default branch)."
          - "swmgr's default: C(\"HEAD\")."
        type: str
      repo_size_limit:
        description:
          - "API field C(RepoSizeLimit)."
          - "with RepoURL: MiB the repository's cache in the data directory may hold (what a fetch of TargetRevision at depth 1 brings); a larger repository is refused."
          - "swmgr's default: C(256)."
          - "From 1 to 4096."
        type: int
      ca_certificates:
        description:
          - "API field C(CACertificates)."
          - "the CAs (each its DER in base64) that sign the HTTPS server's certificate (URL, RepoURL and HealthURL), instead of the system's; at most 8."
        type: list
        elements: str
      interval:
        description:
          - "API field C(Interval)."
          - "seconds between polls."
          - "swmgr's default: C(300)."
          - "From 5 to 86400."
        type: int
      username:
        description:
          - "API field C(Username)."
          - "with Password: HTTP basic authentication; else Password is sent as a bearer token."
        type: str
      password:
        description:
          - "API field C(Password)."
          - "the bearer token (or, with Username, the basic password) sent to the server; write-only, stored encrypted."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
      public_key:
        description:
          - "API field C(PublicKey)."
          - "the key that signs the documents; required unless AllowUnsigned."
        type: str
      allow_unsigned:
        description:
          - "API field C(AllowUnsigned)."
          - "apply documents without a signature (trust the server and the network)."
          - "swmgr's default: C(false)."
        type: bool
      policy:
        description:
          - "API field C(Policy)."
          - "report: a change made otherwise is drift, shown in DriftState; revert: the next poll applies the intent again."
          - "swmgr's default: C(\"report\")."
        type: str
        choices:
          - "report"
          - "revert"
      confirm_wait:
        description:
          - "API field C(ConfirmWait)."
          - "seconds an intent's commit awaits its confirmation, which the health check gives; unconfirmed, it is rolled back. 0: a plain commit."
          - "swmgr's default: C(120)."
          - "From 0 to 3600."
        type: int
      health_url:
        description:
          - "API field C(HealthURL)."
          - "the health check: a 2xx answer confirms the intent's commit; \"\": the intent's URL answers again (the switch still reaches its source of truth)."
        type: str
      webhook_secret:
        description:
          - "API field C(WebhookSecret)."
          - "the shared secret of the push webhook (POST /public/v1/intent/webhook, no login): GitHub's, Gitea's and Forgejo's X-Hub-Signature-256 (HMAC-SHA256 of the body under it) or GitLab's X-Gitlab-Token (it); a push to TargetRevision fetches at once. \"\": the webhook is refused. Write-only, stored encrypted."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
'''

EXAMPLES = r'''
- name: "Make IntentSource as given"
  swmgr.switch.swmgr_intent_source:
    state: merged
    config:
      - name: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("IntentSource")


if __name__ == '__main__':
    main()
