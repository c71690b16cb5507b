# -*- coding: utf-8 -*-
# Apache-2.0 (see LICENSE)
"""The options and return values every resource module shares."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  state:
    description:
      - C(merged) creates the objects given and changes the fields given, leaving everything else.
      - C(replaced) makes each object given exactly as given; fields left out return to swmgr's
        defaults (write-only secrets and values the switch discovers, such as a port's speed, stay).
      - C(overridden) makes the kind's objects exactly the list; every other object of the kind is
        deleted (or, for ports, returned to its defaults).
      - C(deleted) deletes the objects given (ports return to their defaults), or every object of the
        kind when O(config) is empty.
      - C(gathered) reads the running objects of the kind into RV(gathered) and changes nothing.
      - C(rendered) only turns O(config) into the REST edits it means, in RV(rendered), without
        contacting the switch.
      - C(replaced), C(overridden) and C(deleted) are computed by the switch on its candidate, not
        by Ansible, and committed as one revision.
    type: str
    choices: [merged, replaced, overridden, deleted, gathered, rendered]
    default: merged
  comment:
    description:
      - The revision's comment, in swmgr's history.
    type: str
  confirm:
    description:
      - Seconds within which the commit must be confirmed (M(swmgr.switch.swmgr_confirm)), or the
        switch rolls it back by itself. 0 commits for good.
    type: int
    default: 0
  update_secrets:
    description:
      - C(on_create) sends write-only secrets (passwords) only when it creates the object, so that a
        task stays idempotent; C(always) sends them every time.
    type: str
    choices: [on_create, always]
    default: on_create
'''

    RETURN = r'''
changed:
  description: Whether the switch's configuration changed (or would, in check mode).
  returned: always
  type: bool
revision:
  description: The revision the commit made; the running revision when nothing changed.
  returned: when state is not rendered
  type: int
changes:
  description: The switch's diff of the commit, as its candidate diff answers it (Kind, Key, Op, Before, After).
  returned: when state is not rendered or gathered
  type: list
gathered:
  description: The running objects of the kind, with option names.
  returned: when state is gathered
  type: list
rendered:
  description: The REST edits O(config) means, as POST /public/v1/candidates/{id}/edits takes them.
  returned: when state is rendered
  type: list
'''
