# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_config_archive_server
short_description: "Manage swmgr ConfigArchiveServer objects"
description:
  - "A server that receives archives of the configuration."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of ConfigArchiveServer: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The ConfigArchiveServer objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      ip_addr:
        description:
          - "API field C(IpAddr)."
          - "Key: identifies the object."
        type: str
      port:
        description:
          - "API field C(Port)."
          - "SSH port (swmgr's addition; FlexSwitch always used 22)."
          - "swmgr's default: C(22)."
          - "From 1 to 65535."
        type: int
      username:
        description:
          - "API field C(Username)."
        type: str
      password:
        description:
          - "API field C(Password)."
          - "write-only; stored encrypted."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
      dst_file:
        description:
          - "API field C(DstFile)."
          - "swmgr's default: C(\"/opt/swmgr/startup-config\")."
        type: str
      interval:
        description:
          - "API field C(Interval)."
          - "minutes; 0 archives only on change."
          - "swmgr's default: C(1440)."
          - "From 0 to 44640."
        type: int
      nonce:
        description:
          - "API field C(Nonce)."
          - "salt of the archive encryption; only with Passphrase."
        type: str
      passphrase:
        description:
          - "API field C(Passphrase)."
          - "encrypts archives; only with Nonce; write-only."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
        type: str
        no_log: true
      on_change:
        description:
          - "API field C(OnChange)."
        type: bool
      retry_count:
        description:
          - "API field C(RetryCount)."
          - "swmgr's default: C(3)."
          - "From 0 to 10."
        type: int
      timeout:
        description:
          - "API field C(Timeout)."
          - "seconds."
          - "swmgr's default: C(30)."
          - "From 1 to 3600."
        type: int
      timestamp:
        description:
          - "API field C(Timestamp)."
          - "swmgr's default: C(\"disabled\")."
        type: str
        choices:
          - "append"
          - "prepend"
          - "disabled"
'''

EXAMPLES = r'''
- name: "Make ConfigArchiveServer as given"
  swmgr.switch.swmgr_config_archive_server:
    state: merged
    config:
      - ip_addr: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("ConfigArchiveServer")


if __name__ == '__main__':
    main()
