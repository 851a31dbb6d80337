journal --reconcile --json
