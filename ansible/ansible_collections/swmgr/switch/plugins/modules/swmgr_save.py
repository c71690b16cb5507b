# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_save
short_description: "Save swmgr's running configuration (SaveConfig)"
description:
  - "Saves the running configuration to a local file or an archive server."
  - "Check mode is the action's dry run. Generated from swmgr's declaration of the action."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
options:
  nonce:
    description:
      - "API field C(Nonce)."
    type: str
  passphrase:
    description:
      - "API field C(Passphrase)."
      - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
    type: str
    no_log: true
  dst_file_uri:
    description:
      - "API field C(DstFileURI)."
      - "default: the data directory's startup-config."
    type: str
  file_name:
    description:
      - "API field C(FileName)."
      - "FlexSwitch 1.x: a file name in the data directory, or an absolute path (then the local file DstFileURI ///path names, under its rules); not with DstFileURI."
    type: str
  timeout:
    description:
      - "API field C(Timeout)."
      - "swmgr's default: C(30)."
      - "From 1 to 3600."
    type: int
  retry_count:
    description:
      - "API field C(RetryCount)."
      - "swmgr's default: C(3)."
      - "From 0 to 10."
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
- name: Save the running configuration as the startup configuration
  swmgr.switch.swmgr_save:
'''

RETURN = r'''
result:
  description: swmgr's answer to the action.
  returned: always
  type: dict
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_action


def main():
    run_action("SaveConfig")


if __name__ == '__main__':
    main()
