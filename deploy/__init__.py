"""Deployment: posviz as replicas behind HAProxy (``python deploy/scaleout.py``)."""
