"""What videogen's services share. Imports no service."""
