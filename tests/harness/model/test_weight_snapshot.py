"""Seeds give the same weights as before: `torch.manual_seed(0); build_model(cfg)` for configs that together
build every component kind must reproduce the SHA-256 of every tensor recorded in
`tests/fixtures/weight_snapshot.json`.

The fixture was written by `tests/fixtures/make_weight_snapshot.py` with the code as it was before the init
refactor of issue 16 (open init kinds, documented init on the registry), at commit ba35c37; the refactor
must not change a single drawn weight, and neither may any later change that does not mean to.
"""

import hashlib
import json
import pathlib

import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import build_model

SNAPSHOT = json.loads((pathlib.Path(__file__).parents[2] / "fixtures" / "weight_snapshot.json").read_text())


@pytest.mark.parametrize("name", sorted(SNAPSHOT["configs"]))
def test_seeded_weights_match_the_snapshot(name):
    recorded = SNAPSHOT["configs"][name]
    torch.manual_seed(0)
    model = build_model(ModelConfig(**{**SNAPSHOT["base"], **recorded["overrides"]}))
    digests = {param_name: hashlib.sha256(tensor.detach().contiguous().numpy().tobytes()).hexdigest()
               for param_name, tensor in model.named_parameters()}
    assert sorted(digests) == sorted(recorded["tensors"]), "the model's tensors are not the recorded ones"
    changed = [param_name for param_name, digest in digests.items() if digest != recorded["tensors"][param_name]]
    assert not changed, f"seed 0 draws different weights for: {', '.join(changed)}"
