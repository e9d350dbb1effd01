import cProfile, sys
holder = sys.modules.setdefault("_prof_holder", type(sys)("_prof_holder"))
if not hasattr(holder, "pr"): holder.pr = cProfile.Profile(); holder.on = False
from posviz_app.page import run
if holder.on: holder.pr.enable()
try: run()
finally:
    if holder.on: holder.pr.disable()
