"""Training one arm: the LightningModule (`lit`), telemetry callbacks, the results-store logger, `train_run`.

Imports torch and Lightning; the CLI imports this package only inside `harness run` / `harness sample`.
"""
