# The two commands of the README:
#   make run    set up everything, then open the app on the bundled demo workspace with the bundled small model
#   make test   set up everything, then run the tests
VENV  := .venv
STAMP := $(VENV)/.reverie-setup-done
DEMO  := demo-workspace

.PHONY: setup run test demo screenshots clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh

demo: $(STAMP)
	@[ -d $(DEMO) ] || $(VENV)/bin/reverie demo $(DEMO)

run: demo
	$(VENV)/bin/reverie-desktop $(DEMO)

test:
	bash scripts/test.sh

screenshots: demo
	$(VENV)/bin/python scripts/screenshots.py $(DEMO)

clean:
	rm -rf $(VENV) $(DEMO) build dist
