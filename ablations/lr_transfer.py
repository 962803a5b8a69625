"""Under the standard parametrization the best learning rate drifts as a model widens, so an arm that wins at a
small width may win partly because the LR grid happened to suit it there. Under μP (Yang et al. 2022, Tensor
Programs V) the best LR should stay where it is, which is what makes a small proxy's LR mean something at the
target. The same LR grid (one step is ×2) at three widths under both parametrizations; μP's base width is the
smallest, where the two are the same model. A 512-token vocabulary: with `tiny`'s 1024 the proxy's 150 steps
end on the unigram plateau at every LR and width, where no LR is better than another.
`harness compare lr_transfer --across d_model` prints each parametrization's best LR at each width."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid
from harness.presets import tiny

WIDTHS = [64, 128, 256]
PARAMETRIZATIONS = grid(parametrization="standard") + grid(parametrization="mup", mup_base_width=WIDTHS[0])

ablation = Ablation(
    "lr_transfer", "Does the best learning rate stay put as the model widens under μP, and drift under the standard "
    "parametrization?",
    base=tiny(vocab_size=512), grid=grid(d_model=WIDTHS) * PARAMETRIZATIONS,
    lrs=[2.0**-k for k in range(11, 4, -1)], train=CPU_PROXY,
)
