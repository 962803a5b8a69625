"""analysis: SQL → frames → statistics → plots and the HTML report; never imports torch (a later issue)."""
