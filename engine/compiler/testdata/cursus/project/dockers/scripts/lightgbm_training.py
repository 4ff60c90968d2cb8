# Placeholder training script of the Cursus-layout test project; it reads
# hyperparams/hyperparameters_<REGION>.json beside it, as Cursus scripts do.
