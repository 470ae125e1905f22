/root/.pyenv/versions/3.11.7/bin/python3 TMP/dicts.py
