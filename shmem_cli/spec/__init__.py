"""The spec front end: a YAML access spec read safely (``source``), validated
(``schema/``), compiled with its index expressions (``compile``, ``expr/``), resolved
for one variant (``layout``) and walked as the requests each access makes
(``space``), within the work budget (``budget``). Import the module you need; this
package imports nothing, so that loading one stage does not load the others."""
