"""lsim: a simulated Lustre server /proc + /sys tree for lharvestd tests.

Modules:
  versions  - per-version profiles: header style, counter tables, file layout
  formats   - exact text rendering (and parsing) of exports/<nid>/stats files
  nids      - LNet NID generation and formatting
  fsio      - atomic file writes and atomic directory removal
  engine    - the model (servers, targets, exports, clients), steps, events,
              ground truth and expected-once output
  scenario  - scenario JSON normalisation and generators for `tree` / `big`
"""
