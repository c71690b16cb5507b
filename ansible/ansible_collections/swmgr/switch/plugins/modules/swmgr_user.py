# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_user
short_description: "Manage swmgr User objects"
description:
  - "A user of the switch: an account of its operating system. Only Access and DefaultShell can be updated; to change anything else, delete the user and create it again."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of User: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The User objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "not a system account (root, daemon, sshd, ...)."
          - "Key: identifies the object."
        type: str
      access:
        description:
          - "API field C(Access)."
          - "swmgr's default: C(\"CLI\")."
        type: str
        choices:
          - "Bash"
          - "CLI"
      default_shell:
        description:
          - "API field C(DefaultShell)."
          - "swmgr's default: C(\"CLI\")."
        type: str
        choices:
          - "Bash"
          - "CLI"
      password:
        description:
          - "API field C(Password)."
          - "at least 8 characters; kept by the OS, never by swmgr."
          - "Write-only: never returned; sent when the object is created, or always with O(update_secrets=always)."
          - "Set at creation only."
        type: str
        no_log: true
      group:
        description:
          - "API field C(Group)."
          - "admin, operator, or another group (read-only role); privileged system groups (root, sudo, adm, shadow, ...) are refused; with the host's accounts (--accounts host) only admin, operator and users."
          - "swmgr's default: C(\"users\")."
          - "Set at creation only."
        type: str
'''

EXAMPLES = r'''
- name: "Make User as given"
  swmgr.switch.swmgr_user:
    state: merged
    config:
      - name: "ops1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("User")


if __name__ == '__main__':
    main()
