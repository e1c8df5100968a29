#!/bin/bash
date -u +"%Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 .device-p3/probe3.py 2>&1 | tee $OUT/probe3.log
