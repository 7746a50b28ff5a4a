# The GPU checks of the GPU-optional packages, for a session lent a CUDA machine (see the device
# tool): carry .whl (jsonschema and its needs for Python 3.12) and run `bash tests/gpu/run.sh`.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:core/src:$(ls -d packages/*/src | tr '\n' ':')
export PAPERPLUG_PROGRESS=0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.is_available())"
timeout 330 python3 tests/gpu/check.py 2>&1 | grep -v "it/s\]" | tee $OUT/check.log
timeout 120 python3 -m pytest -q -p no:cacheprovider -p no:randomly packages/bye/tests/test_stages.py -k cuda packages/csd/tests/test_generators.py 2>&1 | tail -15 | tee $OUT/pytest.log
